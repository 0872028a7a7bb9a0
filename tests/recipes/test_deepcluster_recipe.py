"""`paperzoo train deepcluster` on the embedded digits, smoke-sized: files, the NMI metrics, the encoder's export.

(Exact resume after SIGKILL, pseudo-labels and sampling included: tests/recipes/test_kill_and_resume.py.)
The CLI run trains, evaluates and saves as on every backend, so it runs on one leg.
"""

import json

import numpy as np
import pytest

import keras

from keras_paperzoo.cli import main
from keras_paperzoo.recipes.deepcluster import clusters_for

SMOKE = ["--dataset", "digits", "--image-size", "8", "--preset", "deepcluster_tiny", "--epochs", "2",
         "--steps-per-epoch", "2", "--batch-size", "16", "--probe-epochs", "2", "--verbose", "0"]


def test_clusters_are_cut_to_a_quarter_of_the_images():
    assert clusters_for(10_000, 1500) == 375 and clusters_for(100, 1500) == 100 and clusters_for(10, 4) == 2


@pytest.mark.needs_tensorflow
@pytest.mark.one_leg("torch")
def test_cli_trains_logs_nmi_saves_and_exports_the_encoder(tmp_path):
    assert main(["train", "deepcluster", *SMOKE, "--output-dir", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "metrics.json").read_text())
    for name in ("loss", "pseudo_label_accuracy", "nmi_labels", "nmi_previous", "kmeans_inertia", "knn_acc",
                 "knn_acc_at_init", "linear_probe_accuracy", "linear_probe_accuracy_at_init"):
        assert np.isfinite(saved[name]), name
    assert 0.0 < saved["nmi_labels"] < 1.0 and 0.0 < saved["nmi_previous"] <= 1.0
    assert (saved["num_data"], saved["num_clusters"], saved["pca_dim"], saved["kmeans_init"]) == \
        (1500, 10, 256, "random")
    assert saved["clusters_used"] == 10.0 and saved["image_shape"] == [8, 8, 3]
    model = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    assert type(model).__name__ == "DeepCluster" and model.assignments().shape == (1500,)
    encoder = keras.saving.load_model(tmp_path / "encoder.keras", safe_mode=True)
    images = np.random.default_rng(0).normal(size=(4, 8, 8, 3)).astype("float32")
    np.testing.assert_allclose(encoder.predict(images, verbose=0), model.encoder.predict(images, verbose=0),
                               atol=1e-5)
    assert main(["export", str(tmp_path / "model.keras"), "--format", "saved_model"]) == 0
