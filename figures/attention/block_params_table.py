"""Parameter counts of all-MiniLM-L6-v2 and GPT-2 small, part by part, from their configs.

One block = attention (W_Q, W_K, W_V, W_O and their biases: ``mhalib.mha_param_count``)
+ feed-forward (W_1, W_2 and biases) + two LayerNorms (a gain and a bias each), from
``mhalib.transformer_block_param_count``; then the embeddings, the final LayerNorm and the
output head. GPT-2's output head reuses the token embedding (tied), so it adds nothing.
The same numbers as the block diagram (``transformer_block``). Page: where attention lives.
"""
from __future__ import annotations

from figures._kit import cli, style
from figures._kit.export import markdown_table
from figures.attention.transformer_block import data  # noqa: F401  (the same numbers as the diagram)


def table(data: dict) -> str:
    enc, dec = data["encoder"], data["decoder"]

    def row(part, formula, key):
        return [part, formula] + [f"{key(m):,}" for m in (enc, dec)]

    rows = [
        row("attention: W_Q, W_K, W_V, W_O + biases", "4 D² + 4 D", lambda m: m["block_params"]["attention"]),
        row("feed-forward: W_1, W_2 + biases", "2 D d_ff + d_ff + D", lambda m: m["block_params"]["feed_forward"]),
        row("two LayerNorms", "4 D", lambda m: m["block_params"]["layer_norms"]),
        row("**one block**", "", lambda m: m["block_params"]["total"]),
        row("**all blocks**", "L × block", lambda m: m["blocks_total"]),
        row("token embedding", "V D", lambda m: m["embedding_params"]["token"]),
        row("position embedding (learned)", "max positions × D", lambda m: m["embedding_params"]["position"]),
        row("segment embedding + embedding LayerNorm", "types × D + 2 D",
            lambda m: m["embedding_params"]["segment"] + m["embedding_params"]["norm"]),
        row("final LayerNorm", "2 D", lambda m: m["final_norm_params"]),
        row("output (MiniLM: mean pooling; GPT-2: tied head)", "0",
            lambda m: m["output_head_params"]),
        row("**total**", "", lambda m: m["total_params"]),
    ]
    rows.append(["share in attention layers", "", *(style.percent(m['share']['attention']) for m in (enc, dec))])
    return markdown_table(["part", "count", enc["name"], dec["name"]], rows, "llrr")


main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
