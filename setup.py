"""Build hook: ship ``logic_consistency_autoload.pth`` at the top of site-packages.

lm-eval 0.4.13 has no task plug-in hook, so the ``.pth`` line lets plain ``lm_eval --tasks
logic_consistency`` find this suite's tasks (see ``harness_ext/autoload.py``; set
``LOGIC_CONSISTENCY_AUTOLOAD=0`` to turn it off). Everything else lives in ``setup.cfg``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH_NAME = "logic_consistency_autoload.pth"
PTH_SOURCE = Path(__file__).parent / "harness_ext" / PTH_NAME


class BuildPyWithPth(build_py):
    """``build_py`` that also places the autoload ``.pth`` file at the root of the build."""

    def run(self) -> None:
        super().run()
        # An editable install (PEP 660) packs what lands in the unpacked wheel, which setuptools
        # points ``install_lib`` at; a regular build packs ``build_lib``.
        if getattr(self, "editable_mode", False):
            target = Path(self.get_finalized_command("install").install_lib)
        else:
            target = Path(self.build_lib)
        self.copy_file(str(PTH_SOURCE), str(target / PTH_NAME), preserve_mode=0)


setup(cmdclass={"build_py": BuildPyWithPth})
