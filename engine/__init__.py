"""gpurank engine: evaluate, group and rank training configurations."""
