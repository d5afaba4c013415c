"""The columns a ``tracebench`` episode adds to its results row (``TaskTemplate.result_columns``)."""

#: name -> (dtype, meaning)
RESULT_COLUMNS: dict[str, tuple[str, str]] = {
    "simulator": ("str", "simulator name"),
    "noise": ("str", "low (kappa_ref) | high (4 kappa_ref)"),
    "context": ("bool", "domain context in the prompt"),
    "examples_per_class": ("int", "labeled support samples per class"),
    "submission": ("str", "direct | programmatic"),
    "n_test": ("int", "test batch size"),
    "seed": ("int", "repetition seed"),
    "pool_seed": ("int", "sample pool seed"),
    "slug": ("str", "the paper's condition slug of the episode's settings (e.g. gentle-cloud); null: not a paper condition"),
    "heldout_per_class": ("int", "held-out samples per class"),
    "pool_per_class": ("int", "generated pool size per class; null: the default"),
    "pool": ("str", "JSON of the released pool the episode ran on (path, condition, noise); null: a generated pool"),
    "noise_seeds": ("str", "episode (one noise seed for all its samples) | sample (one per sample)"),
    "accuracy": ("float", "top-1 accuracy on the episode batch"),
    "shortlist": ("float", "mean shortlist score on the episode batch"),
    "n_invalid": ("int", "invalid predictions on the episode batch"),
    "heldout_accuracy": ("float", "top-1 accuracy on the held-out batch"),
    "heldout_shortlist": ("float", "mean shortlist score on the held-out batch"),
    "heldout_n": ("int", "held-out batch size"),
    "heldout_n_invalid": ("int", "invalid predictions on the held-out batch"),
}
