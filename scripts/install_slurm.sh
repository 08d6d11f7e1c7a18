#!/usr/bin/env bash
# Installs what the real-Slurm tests of the campaign's Slurm backend need (tests/campaign/
# test_slurm_cluster.py): Debian's slurmctld, slurmd, the Slurm client commands and munge.
# Idempotent: exits 0 at once when they are already installed. Needs root and apt-get (the
# test container is Debian 12: Slurm 22.05); anywhere else it says why and exits 1, and the
# tests skip with that reason.
set -euo pipefail

needed=(slurmctld slurmd sbatch squeue scancel sinfo munged)
missing=()
for cmd in "${needed[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$cmd")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install_slurm: Slurm and munge are installed"
    exit 0
fi
echo "install_slurm: missing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "install_slurm: not root: cannot apt-get install slurmctld slurmd slurm-client munge" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_slurm: no apt-get on this machine: install Slurm (slurmctld, slurmd, client) and munge by hand" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
packages=(slurmctld slurmd slurm-client munge)
if ! apt-get install -y --no-install-recommends "${packages[@]}"; then
    apt-get update
    apt-get install -y --no-install-recommends "${packages[@]}"
fi
echo "install_slurm: installed ${packages[*]}"
