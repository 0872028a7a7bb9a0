"""The two preset shapes, as plain Python (no Keras: `paperzoo train --preset` reads every preset table
before Keras is imported, `recipes/checks.py`).

- a backbone preset: {"description": ..., "config": the backbone's constructor arguments};
- a trainer preset (`models/trainer.py`'s `PRESET_SCHEMA`): {"description": ..., "backbone":
  {"preset": NAME, "overrides": {...}}, "arguments": the trainer's constructor arguments}.
"""


def backbone_preset(description, **config):
    """A backbone preset: {"description": one line on what it is, "config": its constructor arguments}."""
    return {"description": description, "config": config}


def trainer_preset(description, backbone, overrides=None, **arguments):
    """A trainer preset: backbone preset `backbone` with `overrides`, the trainer's `arguments`.

    `trainer_preset("MoCo v1 ...", "resnet50", version=1, queue_size=65536)` is
    `{"description": "MoCo v1 ...", "backbone": {"preset": "resnet50", "overrides": {}},
    "arguments": {"version": 1, "queue_size": 65536}}`.
    """
    return {"description": description, "backbone": {"preset": backbone, "overrides": dict(overrides or {})},
            "arguments": arguments}
