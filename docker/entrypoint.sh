#!/bin/bash
# gpurank's entrypoint in the RAPIDS image. The image's own entrypoint activates the conda
# base environment and prints a banner on stdout first, which would break machine-readable
# output (`gpurank info --json`); this activates the same environment (its activate.d
# scripts included) without a banner, then runs gpurank with the container's arguments.
set -eo pipefail
# shellcheck source=/dev/null
. /opt/conda/etc/profile.d/conda.sh
conda activate base
exec gpurank "$@"
