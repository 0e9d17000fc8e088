"""Roofline Lab core: the roofline / KV-cache model, pure Python (param + numpy).

Usable from a notebook::

    from core import Scenario
    r = Scenario(model="llama-3-8b", batch=56).evaluate()
    r.tokens_per_s_with_kv
"""

from .config_reader import from_hf_config, parse_config_text
from .hardware import Accelerator, get_accelerator, load_accelerators
from .model_catalogue import get_model, load_models
from .models import ConfigError, ModelSpec
from .scenario import Scenario, ScenarioResult, evaluate

__all__ = [
    "Accelerator",
    "ConfigError",
    "ModelSpec",
    "Scenario",
    "ScenarioResult",
    "evaluate",
    "from_hf_config",
    "parse_config_text",
    "get_accelerator",
    "get_model",
    "load_accelerators",
    "load_models",
]
