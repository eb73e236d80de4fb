"""One place that opens ONNX models, so every stage runs with the same thread settings."""

from __future__ import annotations

from pathlib import Path

import onnxruntime as ort

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


class ModelMissingError(FileNotFoundError):
    """A model file is not where the reader expects it; retrain with ``python -m vision.train``."""


def open_session(path: Path, threads: int) -> ort.InferenceSession:
    if not path.is_file():
        raise ModelMissingError(f"model not found: {path} (train it with `python -m vision.train`)")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle threads sleep rather than spin: the two stages run back to back on the same cores, and a
    # Pi also runs the camera and the web page; spinning threads of one session starve the other.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
