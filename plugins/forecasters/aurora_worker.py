"""The Aurora forecaster's worker: runs in Aurora's own environment, never imported by the harness.

Aurora's package (``aurora-model``, the authors' code) imports torchvision, which does not import beside
the harness's CPU torch 2.13.0 (PyPI's torchvision is a CUDA build: ``operator torchvision::nms does not
exist``), so it runs in a separate virtual environment with torch 2.14.1 and torchvision 0.29.1
(``scripts/install-forecasters.sh aurora``; pins in ``aurora_requirements.txt``).  The harness starts
this file with that environment's Python (:mod:`.aurora`) and talks JSON lines on stdin/stdout, one
message per line, one answer per message:

- ``{"op": "load", "model": SOURCE, "device": "auto"|"cpu"|"cuda", "threads": N}`` -> ``{"ok": true,
  "info": {...}}`` (``auto``: CUDA when torch sees a GPU, else the CPU; N torch threads on the CPU): ``AuroraForPrediction.from_pretrained(SOURCE)`` (a local folder saved with
  ``save_pretrained``, or a Hugging Face id); a folder holding ``vit_config/`` and ``bert_config/``
  (the tiny test checkpoints) gives its vision and text encoders those configurations instead of the
  package's ViT-base and BERT-base ones.
- ``{"op": "forecast", "history": [floats], "horizon": H, "n_samples": S, "seed": N, "context": TEXT|null}``
  -> ``{"ok": true, "samples": [[H floats] x S]}``: ``model.generate(inputs=(1, T), text_input_ids=...
  (TEXT tokenized by the model's BERT tokenizer, at most 125 tokens, as ``text_inputs`` would be),
  max_output_length=H, num_samples=S, inference_token_len=config.token_len)`` under
  ``torch.manual_seed(seed)`` (generate's default ``inference_token_len=None`` fails in the model's forward).
- anything failing -> ``{"ok": false, "error": "Type: message"}``; the worker keeps serving.

Only the standard library at module level: torch and aurora are imported when the model is loaded.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

#: BERT tokens of the text context (generate's default ``max_text_token_length``)
MAX_TEXT_TOKENS = 125


def load(message: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    import torch

    with contextlib.redirect_stdout(io.StringIO()):  # the package prints while importing and loading
        from aurora import AuroraForPrediction
        from aurora import modality_connector

        folder = Path(message["model"])
        for cls, sub in ((modality_connector.VisionEncoder, "vit_config"),
                         (modality_connector.UnifiedImageProcessor, "vit_config"),
                         (modality_connector.TextEncoder, "bert_config")):
            if (folder / sub / "config.json").is_file():
                cls.config_path = str(folder / sub)
        device = message.get("device") or "auto"
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("device 'cuda' asked for, but torch sees no GPU (use device: auto or cpu)")
        if message.get("threads") and device == "cpu":
            torch.set_num_threads(int(message["threads"]))
        model = AuroraForPrediction.from_pretrained(message["model"]).to(device).eval()
    config = model.config
    info = {"token_len": int(config.token_len), "hidden_size": int(config.hidden_size),
            "num_sampling_steps": int(config.num_sampling_steps), "torch": torch.__version__, "device": device}
    return model, info


def forecast(model: Any, message: dict[str, Any]) -> list[list[float]]:
    import torch

    device = next(model.parameters()).device
    history = torch.tensor([message["history"]], dtype=torch.float32, device=device)
    text = message.get("context")
    tokens: dict[str, Any] = {}
    if text:  # tokenized as generate(text_inputs=...) does, without its squeeze(0) that drops a batch of one
        encoded = model._tokenize([text], max_length=MAX_TEXT_TOKENS)
        tokens = {"text_input_ids": encoded["input_ids"].to(device),
                  "text_attention_mask": encoded["attention_mask"].to(device),
                  "text_token_type_ids": encoded.get("token_type_ids",
                                                     torch.zeros_like(encoded["input_ids"])).to(device)}
    with torch.random.fork_rng(devices=[]), torch.inference_mode():
        torch.manual_seed(int(message["seed"]))
        out = model.generate(inputs=history, **tokens,
                             max_output_length=int(message["horizon"]), num_samples=int(message["n_samples"]),
                             inference_token_len=int(model.config.token_len))  # generate's None fails in forward
    return out[0].float().cpu().tolist()                                                    # (S, H)


def serve(stdin=sys.stdin, stdout=sys.stdout) -> None:
    model = None
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
            if message.get("op") == "load":
                model, info = load(message)
                answer: dict[str, Any] = {"ok": True, "info": info}
            elif message.get("op") == "forecast":
                if model is None:
                    raise RuntimeError("no model loaded")
                answer = {"ok": True, "samples": forecast(model, message)}
            else:
                raise ValueError(f"unknown op {message.get('op')!r}")
        except Exception as exc:  # noqa: BLE001 - every failure is an answer; the worker keeps serving
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()


def build_tiny_model(folder: str, seed: int = 0) -> str:
    """Save a tiny randomly initialised Aurora under ``folder`` with Aurora's own classes and
    ``save_pretrained`` (its config.json and model.safetensors), with tiny ``vit_config/`` and
    ``bert_config/`` beside them (the package's tokenizer vocabulary, 1 layer, width 32), and
    ``harness.json`` flagging the weights ``random-init``.  Run in Aurora's environment; no download."""
    import shutil

    import torch

    with contextlib.redirect_stdout(io.StringIO()):
        import aurora
        from aurora import AuroraConfig, AuroraForPrediction, modality_connector

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    package = Path(aurora.__file__).parent
    tiny = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2}
    for sub in ("vit_config", "bert_config"):
        shutil.copytree(package / sub, out / sub, dirs_exist_ok=True)
        config = json.loads((out / sub / "config.json").read_text(encoding="utf-8"))
        (out / sub / "config.json").write_text(json.dumps({**config, **tiny}, indent=2), encoding="utf-8")
    modality_connector.VisionEncoder.config_path = str(out / "vit_config")
    modality_connector.UnifiedImageProcessor.config_path = str(out / "vit_config")
    modality_connector.TextEncoder.config_path = str(out / "bert_config")
    config = AuroraConfig(token_len=8, hidden_size=32, intermediate_size=64, num_enc_layers=1, num_dec_layers=1,
                          num_attention_heads=2, num_sampling_steps=4, flow_loss_depth=1, num_prototypes=16,
                          num_distill=4)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AuroraForPrediction(config)
        with torch.no_grad():  # Aurora zero-initialises its flow head (it would draw the mean only): jitter all
            for parameter in model.parameters():
                parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(str(out))
    (out / "harness.json").write_text(json.dumps({"harness_weights": "random-init"}) + "\n", encoding="utf-8")
    return str(out)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--build-tiny"]:
        print(build_tiny_model(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0))
    else:
        serve()
