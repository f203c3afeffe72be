#!/usr/bin/env bash
# The PyTorch-level checks of the C ABI (python/test_ext_host.py,
# python/test_mempool.py, python/test_torch_history.py) on a machine
# without a GPU, host backend. CI skips them (it has no PyTorch); this
# installs what they need into a virtual environment, from PyPI:
#   - torch (a CUDA build: the checks load PyTorch's pluggable-allocator
#     extension through torch.utils.cpp_extension) and numpy;
#   - ninja, which torch.utils.cpp_extension needs to build;
#   - nvidia-cuda-crt of the CUDA runtime wheel's version when the runtime
#     wheel's headers lack crt/host_defines.h (the cu13 wheels do);
# and points CUDA_HOME at a toolkit made of those wheels' headers and
# libcudart (no nvcc is needed: the extension is C++ only). Needs the
# network once (about 4 GB), a C++ compiler and a Rust toolchain.
#
#   bash scripts/torch_host_checks.sh        # venv in target/torch-venv
#   TORCH_VENV=/path/to/venv bash scripts/torch_host_checks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(realpath -m "${TORCH_VENV:-target/torch-venv}")
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q)
"${pip[@]}" torch numpy ninja
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
header=$(find "$site/nvidia" -name cuda_runtime_api.h | head -1)
[ -n "$header" ] || { echo "no CUDA runtime headers under $site/nvidia: is torch a CUDA build?" >&2; exit 1; }
include=$(dirname "$header")
if [ ! -e "$include/crt/host_defines.h" ]; then
    runtime=$("$venv/bin/python" -m pip show nvidia-cuda-runtime | sed -n 's/^Version: //p')
    [ -n "$runtime" ] || { echo "$include lacks crt/ and no nvidia-cuda-runtime wheel says which crt to add" >&2; exit 1; }
    "${pip[@]}" "nvidia-cuda-crt==$runtime"
fi
cudart=$(find "$site/nvidia" -name 'libcudart.so.*' | head -1)
home=$PWD/target/torch-cuda-home
mkdir -p "$home/lib64" "$home/bin"
ln -sfn "$include" "$home/include"
ln -sf "$cudart" "$home/lib64/libcudart.so"
cargo build --release
export PATH="$venv/bin:$PATH" CUDA_HOME="$home" TORCH_CUDA_ARCH_LIST=9.0 EXPANSE_EXT_DIR="$PWD/target/torch-ext"
python -c 'import torch; print("torch", torch.__version__)'
for t in test_ext_host test_mempool test_torch_history; do
    python "python/$t.py" target/release/libexpanse.so
done
