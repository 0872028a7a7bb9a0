"""Export Keras models for deployment (TF SavedModel, LiteRT) and verify them numerically.

Example:

```python
import keras
from keras_paperzoo.export import export_model

x = keras.Input((4,), name="features")
model = keras.Model(x, keras.layers.Dense(3, activation="sigmoid")(x))
result = export_model(model, "/tmp/clf_sm", format="saved_model", overwrite=True)
print(result.format, result.max_abs_diff, result.ok)
```

Command line (what `export_model_file` runs in a child process on JAX/PyTorch):

    KERAS_BACKEND=tensorflow python -m keras_paperzoo.export model.keras out.tflite \
        --format litert [--submodel generator] [--tolerance 1e-4] [--overwrite]

A BERT classifier taking raw strings (WordPiece tokenizer and packing in the graph):

    export_text_classifier(classifier, tokenizer_or_vocabulary_file, "/tmp/bert_sm", sequence_length=64)
    python -m keras_paperzoo.export model.keras bert_sm --format saved_model --vocabulary vocabulary.txt
"""

from keras_paperzoo.export.exporters import DEFAULT_TOLERANCE
from keras_paperzoo.export.exporters import ExportResult
from keras_paperzoo.export.exporters import export_model
from keras_paperzoo.export.exporters import export_model_file
from keras_paperzoo.export.exporters import load_model_file
from keras_paperzoo.export.exporters import resolve_submodel
from keras_paperzoo.export.text import ExportMismatchError
from keras_paperzoo.export.text import TextExportResult
from keras_paperzoo.export.text import export_text_classifier
from keras_paperzoo.export.text import export_text_classifier_file
from keras_paperzoo.export.verify import FORMATS
from keras_paperzoo.export.verify import verify_export

__all__ = [
    "DEFAULT_TOLERANCE",
    "ExportMismatchError",
    "ExportResult",
    "FORMATS",
    "TextExportResult",
    "export_model",
    "export_model_file",
    "export_text_classifier",
    "export_text_classifier_file",
    "load_model_file",
    "resolve_submodel",
    "verify_export",
]
