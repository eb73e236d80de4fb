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
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
