"""What the references' training steps share: the optimizer step around `model.loss` and the
parameter count. (`invaspread_cifar.py` keeps its own copies.)
"""


def loss_step(model, opt, after=None, before_step=None):
    """`step(*batch) -> detached loss`: zero_grad, `model.loss(*batch)`, backward, `before_step()`
    (e.g. dropping a frozen parameter's gradient) when given, `opt.step()`, then `after()` (e.g. a
    memory-bank update outside the gradient) when given."""

    def step(*batch):
        opt.zero_grad(set_to_none=True)
        loss = model.loss(*batch)
        loss.backward()
        if before_step is not None:
            before_step()
        opt.step()
        if after is not None:
            after()
        return loss.detach()

    return step


def count_params(module):
    """Trainable parameters (each once: a tied embedding counts once)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
