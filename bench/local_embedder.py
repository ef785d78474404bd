"""Local embedder benchmark: how fast a local embedder embeds, and what it costs in memory.

In one process, with no database: the time to load the model, the resident memory after loading
and after a batch of texts longer than the model's 256 word pieces, the indexing rate (texts per
second, wall clock and per CPU-second, over --rounds rounds of 10 batches of 64 short messages
from bench/data/retrieval_source.txt) and the latency of embedding one query. Indexing is the
vector job calling embed() on the new messages; the database writes beside it are small next to
the model's time. The machine's other work shows in the wall-clock rate, hence best and median.

Run it with:
    .venv/bin/python bench/local_embedder.py [--model local:minilm-onnx] [--rounds 5] [--queries 50]
"""

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/ is not a package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project's apps
from make_reference_vectors import source_texts

BATCH = 64
BATCHES_PER_ROUND = 10


def resident_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local:minilm-onnx", help="a local:<name> embedder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()

    from apps.providers.embeddings import embedder_for
    from apps.providers.local_embedder import LOCAL_MODELS

    texts = source_texts()
    started = time.perf_counter()
    dimensions, _ = LOCAL_MODELS[args.model.removeprefix("local:")]
    embedder = embedder_for(args.model, dimensions)
    print(f"load: {time.perf_counter() - started:.2f} s, resident {resident_mb():.0f} MB")

    batches = [texts[i : i + BATCH] for i in range(0, BATCH * BATCHES_PER_ROUND, BATCH)]
    count = sum(len(batch) for batch in batches)
    characters = statistics.mean(len(text) for batch in batches for text in batch)
    wall, cpu = [], []
    for _ in range(args.rounds):
        started, cpu_started = time.perf_counter(), time.process_time()
        for batch in batches:
            embedder.embed(batch)
        wall.append(count / (time.perf_counter() - started))
        cpu.append(count / (time.process_time() - cpu_started))
    print(
        f"indexing, batches of {BATCH} messages of {characters:.0f} characters on average: "
        f"best {max(wall):.0f} texts/s, median {statistics.median(wall):.0f} texts/s "
        f"(rounds: {', '.join(f'{rate:.0f}' for rate in wall)}); "
        f"{statistics.median(cpu):.0f} texts per CPU-second"
    )

    latencies = []
    for text in texts[: args.queries]:
        started = time.perf_counter()
        embedder.embed([text])
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    p95 = latencies[max(0, round(0.95 * len(latencies)) - 1)]
    print(f"one query: p50 {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms")

    long_texts = [" ".join(texts[i : i + 40]) for i in range(0, BATCH * 40, 40)]
    embedder.embed(long_texts)
    print(f"resident after {len(long_texts)} texts past 256 word pieces: {resident_mb():.0f} MB")
    peak = int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))
    print(f"peak resident: {peak / 1024:.0f} MB")


if __name__ == "__main__":
    main()
