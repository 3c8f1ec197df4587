"""Real agent clients from the npm registry, installed once per pinned version and reused.

`install(package, version, bin_name)` puts `package@version` into its own folder under
`.venv/e2e-clients/` (ignored by git, removed by `make clean`) and returns the path of its
executable. A folder is used only once its install finished: npm works in a scratch folder that
is renamed into place, under a lock, so two test runs never see half an install. npm's cache
lives beside the clients, so nothing is written to $HOME and a second install of another
version reuses the downloads.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
CLIENTS = Path(os.environ.get("MAJORDOMUS_E2E_CLIENTS", PROJECT / ".venv" / "e2e-clients"))
# npm may download a native binary of 100+ MB; a cold install on a slow registry mirror takes minutes.
INSTALL_TIMEOUT_S = 900
DONE = ".installed"


class ClientInstallError(RuntimeError):
    """npm could not install the client; the message carries npm's own words."""


def folder(package: str, version: str) -> Path:
    """Where `package@version` lives: `@scope/name` becomes `@scope+name@version`."""
    return CLIENTS / f"{package.replace('/', '+')}@{version}"


def _npm_env(cache: Path, home: Path) -> dict[str, str]:
    """npm's environment: its cache beside the clients, and a scratch HOME (with its XDG folders),
    so a package's install script (opencode-ai's checks its binary by running it, which writes
    under ~/.config, ~/.cache and ~/.local) leaves nothing in the user's HOME."""
    env = dict(os.environ)
    env.setdefault("npm_config_userconfig", str(Path("~/.npmrc").expanduser()))  # the user's registry
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_STATE_HOME": str(home / ".local" / "state"),
        "npm_config_cache": str(cache),
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "npm_config_loglevel": "error",
    })
    return env


def install(package: str, version: str, bin_name: str) -> Path:
    """Install `package@version` from the npm registry (or reuse the finished install) and
    return the path of its executable `bin_name`."""
    if not version or version in {"latest", "next"} or version[0] in "^~<>=":
        raise ValueError(f"pin an exact version of {package}, not {version!r}")
    target = folder(package, version)
    executable = target / "node_modules" / ".bin" / bin_name
    if (target / DONE).exists() and executable.exists():
        return executable
    npm = shutil.which("npm")
    if npm is None:
        raise ClientInstallError("npm not found on PATH: install Node.js and npm (apt-get install npm)")
    CLIENTS.mkdir(parents=True, exist_ok=True)
    with open(CLIENTS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / DONE).exists() and executable.exists():
            return executable
        scratch = target.with_name(target.name + f".partial-{os.getpid()}")
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)
        scratch.mkdir()
        # An own package.json makes npm install here, not in a package.json found further up.
        (scratch / "package.json").write_text('{"name": "e2e-client", "private": true}\n', encoding="utf-8")
        try:
            proc = subprocess.run(
                [npm, "install", "--prefix", str(scratch), "--no-save", "--no-package-lock",
                 f"{package}@{version}"],
                cwd=scratch, env=_npm_env(CLIENTS / ".npm-cache", scratch / ".npm-home"), capture_output=True, text=True,
                stdin=subprocess.DEVNULL, timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            raise ClientInstallError(f"npm install {package}@{version} took over {INSTALL_TIMEOUT_S} s") from exc
        if proc.returncode != 0 or not (scratch / "node_modules" / ".bin" / bin_name).exists():
            shutil.rmtree(scratch, ignore_errors=True)
            raise ClientInstallError(
                f"npm install {package}@{version} exited {proc.returncode} without bin {bin_name!r}:\n"
                f"{proc.stderr[-4000:]}")
        (scratch / DONE).write_text(f"{package}@{version}\n", encoding="utf-8")
        # Rename, so a reader sees either no folder or a finished one; the .bin links are relative.
        scratch.rename(target)
    return executable
