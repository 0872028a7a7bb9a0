"""The generic view layers: crops, colour, blur, one-view pipelines, several views; and the shared supervised recipes.

Keras preprocessing layers (Keras `DataLayer`s) that run inside a model's traced
train step and in `tf.data` on every backend. Each paper's own recipe lives beside
its model (`models/moco/moco_augmentation.py`, `models/simclr/simclr_augmentation.py`,
`models/byol/byol_augmentation.py`, `models/swav/swav_augmentation.py`,
`models/cmc/cmc_augmentation.py`, `models/cpc/cpc_augmentation.py`) and is built
from these.

- `base.py`: `RandomLayer` (a random step) and `ViewPipeline` (a one-view chain).
- `crops.py`: `RandomResizedCrop`, `crop_and_flip`, `center_crop`, `ten_crop`, `ten_crop_predict`.
- `color.py`: `ColorJitter`, `RandomSolarization`, `PCAColorNoise`, `rgb_pca`, `per_channel_statistics`.
- `blur.py`: `GaussianBlur`.
- `view_augmentation.py`: `ViewAugmentation`, the crop, flip, jitter, grayscale, blur, solarisation chain.
- `multiview.py`: `MultiViewAugmentation` (several views as one layer), `MultiCropAugmentation`.
- `supervised.py`: `CifarAugmentation` / `cifar_augmentation`, `imagenet_augmentation`.
- `seeds.py`, `checks.py`: the layers' seeds and argument checks.

Images are expected in `value_range` (default [0, 1]); normalisation by the
dataset mean and std, if any, comes last (`mean`, `std`).

Example:

```python
from keras_paperzoo.data.views import MultiViewAugmentation, ViewAugmentation

augment = MultiViewAugmentation(ViewAugmentation(32, blur_probability=0.0), views=2, seed=0)
view_1, view_2 = augment(images, training=True)
```
"""

from keras_paperzoo.data.views.base import RandomLayer, ViewPipeline
from keras_paperzoo.data.views.blur import GaussianBlur
from keras_paperzoo.data.views.checks import (
    check_image_size,
    check_interval,
    check_mean_std,
    check_range,
    check_value_range,
)
from keras_paperzoo.data.views.color import (
    ColorJitter,
    PCAColorNoise,
    RandomSolarization,
    per_channel_statistics,
    rgb_pca,
)
from keras_paperzoo.data.views.crops import RandomResizedCrop, center_crop, crop_and_flip, ten_crop, ten_crop_predict
from keras_paperzoo.data.views.multiview import MultiCropAugmentation, MultiViewAugmentation
from keras_paperzoo.data.views.seeds import derived_seed, offset_seed, random_layers, reseed
from keras_paperzoo.data.views.supervised import CifarAugmentation, cifar_augmentation, imagenet_augmentation
from keras_paperzoo.data.views.view_augmentation import BLUR_KERNEL_FRACTION, BLUR_SIGMA, ViewAugmentation
