"""The PyTorch references the families time against: plain PyTorch written from the papers, or
built from timm and transformers. Each module is imported only inside a reference
worker process (`python -m benchmarks FAMILY --runs torch_reference` times one on its own).
"""
