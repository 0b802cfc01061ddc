"""The shipped (model, dataset) pairs as `coinfer model list` prints them, for the bench scripts."""
import subprocess


def model_pairs(coinfer):
    """[(model, dataset), ...] in the order `coinfer model list` gives them."""
    pairs = []
    for line in subprocess.check_output([coinfer, "model", "list"], text=True).splitlines():
        name, _, rest = line.partition("datasets:")
        for ds in rest.split(","):
            pairs.append((name.strip(), ds.strip()))
    return pairs
