"""One optimizer per group of variables, held as the model's single optimizer.

Keras saves, restores and (on JAX) threads through `fit` the state of
`model.optimizer` only. `OptimizerGroup` is that optimizer for trainers with
several: a `keras.optimizers.MultiOptimizer` whose routing is by named group
(`"discriminator"`, `"generator"`, ...) rather than by variable path, because a
sub-model's variable paths do not carry the sub-model's name.
"""

import keras


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class VariableGroups:
    """Routes each variable to the optimizer of the group it was assigned to."""

    def __init__(self, optimizers):
        self.optimizers = dict(optimizers)
        self._group_of = {}
        self._variables = {name: [] for name in self.optimizers}

    def assign(self, groups):
        self._group_of = {}
        self._variables = {}
        for name, variables in groups.items():
            self._variables[name] = list(variables)
            for variable in variables:
                if id(variable) in self._group_of:
                    raise ValueError(
                        f"Variable {variable.path} is in two optimizer groups: "
                        f"{self._group_of[id(variable)]!r} and {name!r}."
                    )
                self._group_of[id(variable)] = name

    def values(self):
        return list(self.optimizers.values())

    def __call__(self, variable):
        name = self._group_of.get(id(variable))
        if name is None:
            raise ValueError(
                f"Variable {variable.path} belongs to no optimizer group "
                f"({sorted(self.optimizers)}); every trainable variable of the "
                "model must be in one group."
            )
        return self.optimizers[name]

    def get_config(self):
        return {
            "optimizers": {
                name: keras.optimizers.serialize(opt)
                for name, opt in self.optimizers.items()
            }
        }

    @classmethod
    def from_config(cls, config):
        return cls(
            {
                name: keras.optimizers.deserialize(opt)
                for name, opt in config["optimizers"].items()
            }
        )


@keras.saving.register_keras_serializable(package="keras_paperzoo")
class OptimizerGroup(keras.optimizers.MultiOptimizer):
    """Several named optimizers acting as one `model.optimizer`.

    Args:
        optimizers: dict of group name -> `keras.optimizers.Optimizer`.
        name: optimizer name.

    Example:

    ```python
    group = OptimizerGroup({"generator": keras.optimizers.Adam(),
                            "discriminator": keras.optimizers.SGD()})
    group["generator"].learning_rate
    ```
    """

    def __init__(self, optimizers, name="optimizer_group", **kwargs):
        kwargs.pop("optimizer_map", None)
        if isinstance(optimizers, VariableGroups):
            groups = optimizers
        else:
            groups = VariableGroups(optimizers)
        super().__init__(groups, name=name, **kwargs)
        self._groups = groups

    @property
    def named_optimizers(self):
        return dict(self._groups.optimizers)

    def __getitem__(self, name):
        return self._groups.optimizers[name]

    def assign_variables(self, groups):
        """Declare which variables each named optimizer updates (before `build`)."""
        unknown = sorted(set(groups) - set(self._groups.optimizers))
        if unknown:
            raise ValueError(f"No optimizer was given for the groups {unknown}.")
        self._groups.assign(groups)

    def group_variables(self, name):
        return self._groups._variables[name]

    def get_config(self):
        return {
            "optimizers": self._groups.get_config()["optimizers"],
            "name": self.name,
            "loss_scale_factor": self.loss_scale_factor,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        optimizers = {
            name: keras.optimizers.deserialize(opt, custom_objects=custom_objects)
            for name, opt in config.pop("optimizers").items()
        }
        return cls(optimizers, **config)
