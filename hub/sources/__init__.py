"""Frame sources: every camera, recording and simulated table behind ``vision.frames.FrameSource``.

Each source lives in its own module and imports its library (OpenCV, picamera2) only when
opened, so importing this package is cheap everywhere, including a machine with no camera.
"""

from .opencv import OpenCVSource
from .picamera import PiCameraSource
from .replay import CorruptFrame, ReplaySource
from .supervisor import SupervisedSource

__all__ = ["CorruptFrame", "OpenCVSource", "PiCameraSource", "ReplaySource", "SupervisedSource"]
