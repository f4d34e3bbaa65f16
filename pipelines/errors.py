"""User-facing errors: each renders as one line that names the file and the key."""


class ClearanceError(Exception):
    """A failure the command line reports as one line, with no traceback, and exits with
    ``exit_status``."""

    exit_status = 2


class ConfigError(ClearanceError):
    """Bad input in a config file, an override or a data file.

    ``file`` is the offending file (or ``--set``), ``key`` the dotted path inside it.
    """

    def __init__(self, file: str, key: str, message: str):
        self.file, self.key, self.message = str(file), key, message
        super().__init__(f"{self.file}: {key}: {message}" if key else f"{self.file}: {message}")


class SweepFailed(ClearanceError):
    """A sweep that stopped before every point ran (workers that could not be replaced, an
    output that could not be written); the message says what is stored and how to resume."""

    exit_status = 1


class SweepInterrupted(ClearanceError):
    """A sweep stopped by Ctrl-C (SIGINT) after storing its finished chunks."""

    exit_status = 130


class MisfitError(ClearanceError):
    """A calibration whose fit does not describe the record within its noise; its outputs
    are written (marked as a misfit) before this is raised."""

    exit_status = 3
