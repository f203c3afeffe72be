#!/usr/bin/env bash
# The seventy-second recording of issue 8 (held out, written blind; the workloads are in scripts/traces/batch72.py and
# batch72_b.py: music and audio production, band-split RoFormer-style music source separation training (stereo 44.1 kHz
# mixtures remixed on the device from four random stems, 29 band-split projections, transformer blocks alternating over
# time and over bands, per-band GLU mask estimators giving a complex vocal mask, an inverse STFT written by irfft and
# fold, L1 waveform plus multi-resolution STFT losses, held-out SDRs), Onsets-and-Frames-style piano transcription
# training (piano rolls drawn on the device and rendered by an additive synthesizer, log-mel features, four
# convolutional acoustic stacks each followed by a small transformer in place of the BiLSTM, BCE and onset-weighted
# velocity losses, held-out frame precision, recall and F1), HiFi-GAN V1 vocoder training (a transposed-convolution
# generator with multi-receptive-field blocks, multi-period and multi-scale discriminators, LSGAN, feature-matching and
# mel-L1 losses, whole-utterance synthesis at evaluation points), an EnCodec-style neural codec service (a SEANet
# encoder and decoder at 24 kHz, residual vector quantisation over 2-32 codebooks for a drawn bandwidth, per-clip
# SI-SNR), a DDSP harmonic-plus-noise instrument model (additive synthesis of 60 harmonics by a cumulative phase,
# frequency-sampled FIR noise overlap-added by fold, a learned reverb by FFT convolution, a 6-scale spectral loss), a
# DiffSinger-style singing-voice synthesiser (a phoneme/note transformer encoder, a length regulator by gather over
# host-built frame indices, a 20-layer WaveNet-style diffusion denoiser, DDIM sampling of held-out phrases), a
# differentiable mixing console fitted to reference mixes (per-stem biquad EQs on the FFT grid, compressors on
# avg-pooled envelopes, pans, a reverb send by FFT convolution, a master EQ, compressor and limiter, Adam against a
# multi-resolution STFT and loudness loss) and an MT3-style multi-instrument transcription service (a T5-style
# encoder-decoder over 2.048 s log-mel segments, greedy decoding with static KV caches and precomputed cross-attention
# keys and values), written in torch alone), longest first (by estimate): $OUT/new72.tar.gz.part00, part01, ...
# Every workload was sized for at most about 7.5 GB requested (reserved perhaps twice that), so that four share one
# H200, and for 0.27-0.36M op outputs (~0.5-0.65M events). encodec_rvq_codec_serve uploads each request's int16 PCM (up
# to 8 clips of 6 s at 24 kHz) from two reused pinned host buffers on a side stream, one request ahead, waited on by
# event and record_stream'ed; mt3_transcribe_serve uploads each request's int16 PCM (one clip of up to 24 s at 16 kHz)
# the same way, one request ahead; the others are single-stream. The largest is piano_transcription_convstack_train,
# 5.87 GB in the meta run (the four convolutional stacks' fp32 activations, 32-64 channels over up to 8 x 512 frames x
# 229 mel bands); bandsplit_roformer_sep_train 5.59 GB (the transformer's activations over up to 4 x 29 bands x 431
# frames at width 128, and the time-axis attention matrices on the meta run's math path); hifigan_mpd_msd_vocoder_train
# 4.78 GB (the generator's and the eight discriminators' activations for up to 12 segments of 8,192 samples);
# ddsp_harmonic_noise_train 1.84 GB (the audio-rate harmonic bank, up to 16 x 64,000 samples x 60 harmonics);
# diffsinger_svs_train 1.26 GB (the denoiser's 20 layers over up to 12 phrases of ~1,000 frames);
# mixing_console_match_opt 0.64 GB (the per-stem, per-band EQ responses on the whole-signal FFT grid);
# encodec_rvq_codec_serve 0.50 GB; mt3_transcribe_serve 0.22 GB.
# The helper that wrote this file ran the CPU smoke run (RECORD_SMOKE=1) on all eight (all printed SMOKE OK, again
# after the resizing below) and each one on the meta device with scripts/traces/meta_run.py, one at a time, at its
# first sizes (under a 200 s limit; three were stopped there and their counts extrapolated from the readback timeline)
# and again at its final sizes under a 200 s limit: every figure below was measured whole at the final sizes (META OK,
# none stopped, none extrapolated).
#   REC_JOBS=4 REC_LIMIT=250 REC_STEP=285 REPLAY_STEP=140 bash scripts/traces/record_new72.sh
# Estimates (peak live in the meta run, which counts fp32 where the GPU run autocasts to bf16, so the GPU's peak
# requested is lower; events from op outputs; none of them measured on a GPU):
# bandsplit_roformer_sep_train 5.59 GB, 313,838 (~0.56M events; measured whole, 143 s);
# piano_transcription_convstack_train 5.87 GB, 312,220 (~0.56M events; measured whole, 109 s);
# hifigan_mpd_msd_vocoder_train 4.78 GB, 314,940 (~0.57M events; measured whole, 73 s);
# encodec_rvq_codec_serve 0.50 GB, 325,425 (~0.59M events; measured whole, 138 s);
# ddsp_harmonic_noise_train 1.84 GB, 321,931 (~0.58M events; measured whole, 140 s);
# diffsinger_svs_train 1.26 GB, 317,148 (~0.57M events; measured whole, 144 s);
# mixing_console_match_opt 0.64 GB, 311,925 (~0.56M events; measured whole, 105 s);
# mt3_transcribe_serve 0.22 GB, 331,812 (~0.60M events; measured whole, 173 s).
# Resized after the first meta runs (step, iteration, request or token counts only, the models and designs
# unchanged): bandsplit_roformer_sep_train (150 -> 115 steps; 409,232 measured whole at 150),
# piano_transcription_convstack_train (420 -> 265 steps; ~1,172 a step, stopped at 397,364),
# hifigan_mpd_msd_vocoder_train (135 -> 104 steps; 408,599 measured whole at 135), ddsp_harmonic_noise_train (500 ->
# 440 steps; 365,960 whole at 500), diffsinger_svs_train (240 -> 170 steps; ~1,794 a step and ~3.8k a DDIM
# evaluation, stopped at 390,346), mixing_console_match_opt (150-190 -> 85-105 iterations a song; 560,447 whole at
# the first sizes, ~796 an iteration), mt3_transcribe_serve (36-40 requests of 48-200 tokens -> 27-30 requests of
# 24-96 tokens; ~179 a token, stopped at 424,605 after 19 requests). encodec_rvq_codec_serve was left as it is.
# The meta run counts optimizers and gradient clipping per parameter (the meta device has no foreach kernels), so the
# GPU's count of optimizer ops is lower (bandsplit_roformer_sep_train's 29 band projections and 29 mask estimators,
# the transcriber's five heads, HiFi-GAN's generator and eight discriminators and the singing-voice denoiser's 20 layers
# are models of many parameter tensors). The meta run's SDPA math path (the separator's time and band attention, the
# transcriber's heads, the singing-voice encoder and MT3's encoder and decoder) counts a few more ops a layer than the
# GPU's fused kernels, and its attention matrices make its meta peak above what the fused kernels hold on the GPU.
# FFTs (stft, rfft, irfft), fold, argmin and cumsum may take work areas the meta device does not count, and cuDNN's
# dilated and grouped convolutions may take workspaces beyond the meta peak.
exec bash "$(dirname "$0")/record_batch.sh" new72 hifigan_mpd_msd_vocoder_train piano_transcription_convstack_train \
  ddsp_harmonic_noise_train bandsplit_roformer_sep_train mixing_console_match_opt encodec_rvq_codec_serve \
  diffsinger_svs_train mt3_transcribe_serve
