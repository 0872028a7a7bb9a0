"""Every serializable class of the package, found by `keras.saving.load_model` after `import keras_paperzoo`.

A class registers with `@keras.saving.register_keras_serializable(package="keras_paperzoo")`
when its module is imported, and Keras's deserializer looks a saved class up by that name
("keras_paperzoo>SimCLR") in its global custom-object dict. Importing every module when the
package is imported would cost seconds (keras-hub imports TensorFlow where it is installed)
and would start Keras before `paperzoo train --backend` chooses the backend. Instead the
package import makes that dict lazy: a "keras_paperzoo>NAME" it lacks is looked up in the
table of registered names (read once from the package's sources), its module is imported,
and the lookup is tried again. When Keras is imported after the package, this happens as
soon as Keras's registry module is loaded.

```python
import keras, keras_paperzoo

model = keras.saving.load_model("runs/simclr/model.keras")  # imports keras_paperzoo.models.simclr
```
"""

import functools
import importlib
import pathlib
import sys

PACKAGE = "keras_paperzoo"
REGISTRY_MODULE = "keras.src.saving.object_registration"


def _registered_names(tree):
    """Names of the classes and functions of a module's syntax tree decorated with
    `register_keras_serializable(package="keras_paperzoo")` (`name=` is not used in the package)."""
    import ast

    for node in ast.walk(tree):
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = decorator.func if isinstance(decorator, ast.Call) else None
            called = getattr(call, "attr", getattr(call, "id", None))
            package = [k.value for k in getattr(decorator, "keywords", ()) if k.arg == "package"]
            if called == "register_keras_serializable" and package and getattr(package[0], "value", None) == PACKAGE:
                yield node.name


@functools.cache
def registered_modules():
    """{"keras_paperzoo>NAME": "keras_paperzoo.module"} of every class and function the package registers."""
    import ast

    root = pathlib.Path(__file__).resolve().parent
    table = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "register_keras_serializable" not in text:
            continue
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for name in _registered_names(ast.parse(text)):
            table[f"{PACKAGE}>{name}"] = module
    return table


class LazyRegistry(dict):
    """Keras's global custom-object dict that imports a missing "keras_paperzoo>NAME"'s module on lookup."""

    def __contains__(self, name):
        return dict.__contains__(self, name) or self._load(name)

    def __getitem__(self, name):
        if not dict.__contains__(self, name):
            self._load(name)
        return dict.__getitem__(self, name)

    def get(self, name, default=None):
        return self[name] if name in self else default

    def _load(self, name):
        module = registered_modules().get(name) if isinstance(name, str) else None
        if module is None or module in sys.modules:  # (a module being imported is in sys.modules already)
            return False
        try:
            importlib.import_module(module)  # its decorators register its classes here
        except ModuleNotFoundError as error:
            if not error.name or error.name.split(".")[0] == PACKAGE:
                raise
            from keras_paperzoo.optional import missing

            raise missing(error, f"Loading {name.split('>')[-1]}") from None
        return dict.__contains__(self, name)


def make_lazy(registry):
    """Swap the module `keras.src.saving.object_registration`'s dict for a `LazyRegistry` of its entries."""
    if not isinstance(registry.GLOBAL_CUSTOM_OBJECTS, LazyRegistry):
        registry.GLOBAL_CUSTOM_OBJECTS = LazyRegistry(registry.GLOBAL_CUSTOM_OBJECTS)


class _WhenKerasLoads:
    """A `sys.meta_path` finder that finds nothing itself: makes Keras's registry lazy right after its module runs."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != REGISTRY_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            loader = spec.loader
            if loader is None or not hasattr(loader, "exec_module"):
                return None
            run = loader.exec_module

            def exec_module(module):
                run(module)
                make_lazy(module)

            loader.exec_module = exec_module
            return spec
        return None


def install():
    """Make Keras's registry lazy now if Keras is imported, else as soon as it is."""
    registry = sys.modules.get(REGISTRY_MODULE)
    if registry is not None:
        make_lazy(registry)
    elif not any(isinstance(finder, _WhenKerasLoads) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WhenKerasLoads())
