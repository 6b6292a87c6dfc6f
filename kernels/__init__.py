"""gpurank numeric kernels: Pareto dominance and TOPSIS on CPU (Numba) and CUDA."""
