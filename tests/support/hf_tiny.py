"""Write a tiny Hugging Face model folder for third-party LLM servers and clients, offline.

`python hf_tiny.py DIR [--tokenizer-only]` (run by an interpreter that has `transformers`, `torch`
and `tokenizers`; it imports nothing from proctor, so tests and bench/llm_client.py run it with
another venv's interpreter by path): a byte-level BPE tokenizer trained here on a small built-in
text, saved as a `PreTrainedTokenizerFast` (tokenizer.json + tokenizer_config.json with a chat
template), and unless --tokenizer-only a 2-layer `LlamaForCausalLM` with random weights saved with
`save_pretrained`. Nothing is downloaded: `transformers serve DIR` (HF_HUB_OFFLINE=1) serves it,
and GuideLLM/AIPerf take the folder as their tokenizer. Timing and token counts matter here, not
the text.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

TEXT = (
    "the quick brown fox jumps over a lazy dog while seven wizards quietly judge boxing matches "
    "inference servers stream tokens to clients that measure time to first token and time per "
    "output token under load with many concurrent requests arriving at random times"
)
WORDS = tuple(TEXT.split())
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SPECIAL = ["<unk>", "<s>", "</s>", "<pad>"]


def corpus() -> list[str]:
    """Deterministic training text: every word, and short sentences made of them."""
    lines = [" ".join(WORDS)]
    n = len(WORDS)
    for i in range(400):
        lines.append(" ".join(WORDS[(i * k + 3 * k * k) % n] for k in range(1, 12)))
    return lines


def write_tokenizer(out: Path, vocab_size: int = 512) -> Any:
    tk = importlib.import_module("tokenizers")
    tok = tk.Tokenizer(tk.models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL,
        initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer)
    fast_cls = importlib.import_module("transformers").PreTrainedTokenizerFast
    fast = fast_cls(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                    pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(out))
    return fast


def write_model(out: Path, vocab_size: int, seed: int = 0) -> None:
    torch = importlib.import_module("torch")
    tr = importlib.import_module("transformers")
    torch.manual_seed(seed)
    cfg = tr.LlamaConfig(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
        bos_token_id=1, eos_token_id=2, pad_token_id=3, tie_word_embeddings=True,
    )
    model = tr.LlamaForCausalLM(cfg)
    # never stop early: generation runs to max_tokens, so the token count is known in advance
    model.generation_config.eos_token_id = None
    model.save_pretrained(str(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--tokenizer-only", action="store_true")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    fast = write_tokenizer(args.out)
    if not args.tokenizer_only:
        write_model(args.out, len(fast))
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
