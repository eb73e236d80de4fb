"""The page players open on their phones: Flask app (``web.app``), its server (``web.server``)."""
