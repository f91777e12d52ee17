#!/usr/bin/env python3
"""Packets reordered into frames in GPU memory, handed to PyTorch without a copy.

    PYTHONPATH=build/python python3 examples/python/frames_to_torch.py examples/gpu-frames.yaml

The config's first interface with an rx.reorder block is the receiver (examples/gpu-frames.yaml:
64 packets of 1024 sample bytes per frame). This program sends netdaq payloads to it from the
config's sender interface, so it runs alone; a real instrument has its sensor instead.
Each frame becomes a torch tensor over the frame's GPU memory (torch.from_dlpack); the frame
buffer goes back to the pipeline when the tensor goes."""
import sys
import time

import numpy as np
import torch

import netdaq

FRAMES = 100


def main(path):
    cfg = netdaq.Config.load(path)
    rx_name = next(n for n in cfg.interfaces if _has_reorder(cfg, n))
    reorder = cfg.reorder(rx_name)
    with netdaq.Session(cfg) as session:
        rxq = session.rx_queue(rx_name, reorder.queue)
        txq = session.tx_queues()[0]
        pipe = netdaq.gpu.FramePipeline(session, rx_name)  # the config's rx.reorder entry
        packet = reorder.payload_offset + reorder.payload_size
        rows = np.zeros((reorder.packets_per_frame, packet), np.uint8)
        frames, seq, start = 0, 0, time.monotonic()
        while frames < FRAMES and time.monotonic() - start < 30:
            if seq < (frames + 2) * reorder.packets_per_frame:  # stay two frames ahead
                for i in range(len(rows)):
                    rows[i, reorder.seq_offset:reorder.seq_offset + 8] = np.frombuffer((seq + i).to_bytes(8, "little"), np.uint8)
                    rows[i, reorder.payload_offset:] = (seq + i) // reorder.packets_per_frame % 256  # the frame's index
                seq += txq.send(rows)
            frame = pipe.next_frame(rxq, timeout=0.01)
            if frame is None:
                continue
            t = torch.from_dlpack(frame)  # (packets_per_frame, samples) on the GPU, no copy
            frames += 1
            if frames % 10 == 0:
                print(f"frame {frame.index}: {tuple(t.shape)} {t.dtype} on {t.device}, complete={frame.complete}, "
                      f"mean {t.float().mean().item():.1f} (the frame index mod 256)", flush=True)
        pipe.flush()
        print(pipe.stats())


def _has_reorder(cfg, name):
    try:
        cfg.reorder(name)
        return True
    except netdaq.Error:
        return False


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/gpu-frames.yaml")
