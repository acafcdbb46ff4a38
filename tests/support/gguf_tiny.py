"""Write a tiny Llama model as one GGUF file for llama.cpp's server, offline.

`python gguf_tiny.py FILE` (run by an interpreter that has the `gguf` package, e.g. the venv of
`llama-cpp-python[server]`; it imports nothing from proctor, so tests and benches run it by path):
a 2-layer Llama with random weights and a SentencePiece-style vocabulary (byte fallback plus a few
hundred word pieces made here), so `python -m llama_cpp.server --model FILE` serves it with no
download. Timing and token counts matter here, not the text.

The output matrix is built so that greedy and sampled decoding never pick end-of-sequence or a
byte token: their rows are zero while every word piece's row has a negated twin (one of each pair
has a positive logit), scaled so the softmax is one-hot. Generation therefore always runs to `max_tokens`, and a client's
token count can be checked exactly.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import numpy as np

try:  # the words the tiny HF model's tokenizer is trained on; run by path, its folder is on sys.path
    from tests.support.hf_tiny import WORDS
except ImportError:
    from hf_tiny import WORDS  # type: ignore[no-redef,import-not-found]

N_EMBD, N_FF, N_LAYERS, N_HEAD, N_HEAD_KV, N_CTX = 64, 128, 2, 4, 2, 2048
UNK, BOS, EOS = 0, 1, 2


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """(pieces, scores, types): the specials, 256 byte tokens, then word and letter pieces."""
    tt = importlib.import_module("gguf").TokenType
    pieces = ["<unk>", "<s>", "</s>"]
    types = [tt.UNKNOWN, tt.CONTROL, tt.CONTROL]
    pieces += [f"<0x{b:02X}>" for b in range(256)]
    types += [tt.BYTE] * 256
    normal: list[str] = ["\u2581"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    normal += sorted({"\u2581" + w for w in WORDS})
    normal += sorted({w[:k] for w in WORDS for k in range(2, len(w))} - set(normal))
    pieces += normal
    types += [tt.NORMAL] * len(normal)
    # longer pieces score higher, so the tokenizer's merges prefer whole words
    scores = [0.0] * (3 + 256) + [float(len(p)) - 100.0 for p in normal]
    return pieces, scores, [int(t) for t in types]


def output_matrix(n_vocab: int, rng: np.random.Generator) -> np.ndarray:
    """Rows in +/- pairs over the word pieces (one logit of each pair is >= 0), zero rows for the
    specials and byte tokens, scaled so the largest logit dwarfs theirs: decoding never picks
    end-of-sequence or a lone byte (which would break the text into partial UTF-8)."""
    w = np.zeros((n_vocab, N_EMBD), np.float32)
    first = 3 + 256
    half = rng.standard_normal(((n_vocab - first) // 2, N_EMBD)).astype(np.float32)
    n = half.shape[0]
    w[first:first + 2 * n:2] = half
    w[first + 1:first + 2 * n:2] = -half
    return w * np.float32(50.0)


def write(path: Path, seed: int = 0) -> int:
    gguf = importlib.import_module("gguf")
    rng = np.random.default_rng(seed)
    pieces, scores, types = vocabulary()
    n_vocab = len(pieces)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("proctor-tiny-llama")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYERS)
    w.add_feed_forward_length(N_FF)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)  # all F32
    w.add_tokenizer_model("llama")
    w.add_token_list(pieces)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(UNK)
    w.add_bos_token_id(BOS)
    w.add_eos_token_id(EOS)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    kv = N_EMBD // N_HEAD * N_HEAD_KV
    w.add_tensor("token_embd.weight", rand(n_vocab, N_EMBD))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, np.float32))
    w.add_tensor("output.weight", output_matrix(n_vocab, rng))
    for i in range(N_LAYERS):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(N_EMBD, np.float32))
        w.add_tensor(b + "attn_q.weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(b + "attn_k.weight", rand(kv, N_EMBD))
        w.add_tensor(b + "attn_v.weight", rand(kv, N_EMBD))
        w.add_tensor(b + "attn_output.weight", rand(N_EMBD, N_EMBD))
        w.add_tensor(b + "ffn_norm.weight", np.ones(N_EMBD, np.float32))
        w.add_tensor(b + "ffn_gate.weight", rand(N_FF, N_EMBD))
        w.add_tensor(b + "ffn_up.weight", rand(N_FF, N_EMBD))
        w.add_tensor(b + "ffn_down.weight", rand(N_EMBD, N_FF))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return n_vocab


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("out", type=Path)
    args = ap.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    n = write(args.out)
    print(f"{args.out} ({n} tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
