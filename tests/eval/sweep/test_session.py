import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

SCRIPT = textwrap.dedent(
    """
    import ray
    from eval.sweep.config import RayInitSettings
    from eval.sweep.session import ray_session

    with ray_session(RayInitSettings(num_cpus=1)):
        print("cpus", ray.cluster_resources().get("CPU"))
    """
)


def test_a_local_run_starts_its_own_ray_beside_a_stale_cluster_file():
    # A cluster stopped without `ray stop` leaves its address behind; ray.init(address=None)
    # would try to join it and fail. A short temp dir: Ray's socket paths must fit 107 bytes.
    tmp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    (tmp / "ray").mkdir()
    (tmp / "ray" / "ray_current_cluster").write_text("127.0.0.1:9")
    env = {"TMPDIR": str(tmp), "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )
    shutil.rmtree(tmp, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cpus 1.0" in done.stdout
