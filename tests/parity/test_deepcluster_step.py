"""One DeepCluster step on pseudo-labels equals a plain-PyTorch re-statement of the authors' step
(issue 36 item 4).

The reference follows Caron et al. 2018 (https://arxiv.org/abs/1807.05520, Sec. 3.2, eq. 1)
and the authors' facebookresearch/deepcluster `main.py` (`train`: `output = model(input)`,
`loss = nn.CrossEntropyLoss()(output, target)` with target the image's cluster, then one
step of the features' and the top layer's optimizers), written here from them, not from
keras_paperzoo: h = features(x), logits = top_layer(h) (a Linear with bias), the mean
cross-entropy against the pseudo-labels, plain SGD on everything. The clustering itself
(PCA, k-means) is not part of this step: the pseudo-labels are set by hand
(`set_pseudo_labels`) and read by each image's index. (No Sobel filter: a deviation the
trainer's docstring names.)
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import keras  # noqa: E402

from keras_paperzoo.models import DeepCluster  # noqa: E402
from tests.parity.parity_checks import assert_close, dense_relu_backbone, set_scaled_normal_start  # noqa: E402

N, K, LR = 12, 4, 0.5


def reference_step(params, images, targets, lr):
    p = {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}
    h = torch.relu(torch.tensor(images).flatten(1) @ p["features_kernel"] + p["features_bias"])
    output = h @ p["top_kernel"] + p["top_bias"]  # top_layer: nn.Linear(D, k)
    loss = torch.nn.CrossEntropyLoss()(output, torch.tensor(targets).long())
    loss.backward()
    with torch.no_grad():
        return loss.item(), {name: (t - lr * t.grad).numpy() for name, t in p.items()}


def _variables(model):
    features_kernel, features_bias = model.backbone.trainable_variables
    named = dict(features_kernel=features_kernel, features_bias=features_bias, top_kernel=model.classifier.kernel,
                 top_bias=model.classifier.bias)
    return {name: keras.ops.convert_to_numpy(v).copy() for name, v in named.items()}


def test_one_deepcluster_step_equals_the_authors_step():
    model = DeepCluster(dense_relu_backbone(), num_data=N, num_clusters=K, augmentation=None, seed=4)
    model.compile(optimizer=keras.optimizers.SGD(LR))
    rng = np.random.default_rng(0)
    set_scaled_normal_start(model, rng)  # the same start everywhere (a trained top layer, not N(0, 0.01))
    pseudo_labels = rng.integers(0, K, size=N)
    model.set_pseudo_labels(pseudo_labels)
    index = np.array([5, 0, 11, 3, 7], dtype="int32")
    images = rng.normal(size=(5, 2, 2, 3)).astype("float32")
    before = _variables(model)
    loss, expected = reference_step(before, images, pseudo_labels[index], LR)
    logs = model.train_on_batch(x={"images": images, "index": index}, return_dict=True)
    after = _variables(model)
    assert logs["loss"] == pytest.approx(loss, rel=1e-5)
    for name, value in expected.items():
        assert np.abs(value - before[name]).max() > 1e-3, f"{name} did not move"
        assert_close(after[name], value, err_msg=name)
