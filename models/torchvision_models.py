#!/usr/bin/python3
"""Export common microcontroller vision and audio networks from PyTorch and quantize
them as a user would with ONNX Runtime's static QDQ quantizer (quantize_qdq.py).

usage: /usr/bin/python3 models/torchvision_models.py OUT_DIR [NAME ...] [--activations uint8|int8]
           [--weight-bits 8|7] [--calib N]
  (default: every model but the board-sized ones of NAMED_ONLY; Debian's python3-torch and
  python3-torchvision)

For each NAME it writes to OUT_DIR:
  NAME.float.onnx    the float export: eval mode (batch norm folded into the convolutions),
                     opset 13, constant folding, as torch.onnx.export does it
  NAME.qdq.onnx      quantize_qdq.py --preprocess's output (uint8 activations, int8
                     per-channel weights; ORT's pre-processing first, as ORT recommends)
  NAME.calib.npy     the calibration batch (N x input shape, seeded normal samples)
  NAME.input_0.npy   one more sample of the same distribution (not in the calibration set)
  NAME.json          parameters, input shape, file sizes

No pretrained weights (the machine has no network): weights are torch's seeded default
initialization (biases it sets to zero drawn from U(-0.1, 0.1) instead), and the batch-norm statistics come from a few seeded random batches run
in training mode, so that activations have the scale of a trained network's and folding
has real work to do. RAM figures and operator coverage do not depend on trained weights.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_qdq  # noqa: E402

SEED = 2026


class DSCNN(nn.Module):
    """MLPerf Tiny keyword spotting DS-CNN: 49x10 MFCC, 64 channels, 4 depthwise-separable
    blocks, average pool, 12 classes."""

    def __init__(self, channels=64, blocks=4, classes=12):
        super().__init__()
        layers = [nn.Conv2d(1, channels, (10, 4), stride=2, padding=(5, 1), bias=False),
                  nn.BatchNorm2d(channels), nn.ReLU()]
        for _ in range(blocks):
            layers += [nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False),
                       nn.BatchNorm2d(channels), nn.ReLU(),
                       nn.Conv2d(channels, channels, 1, bias=False), nn.BatchNorm2d(channels), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((25, 5))
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def conv_bn_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class UNet(nn.Module):
    """A small segmentation U-Net: two 2x down steps (max pool), ConvTranspose 2x2 stride 2
    up steps, skip connections by channel concat, 1x1 classifier."""

    def __init__(self, cin=3, base=8, classes=2):
        super().__init__()
        self.enc1, self.enc2 = conv_bn_relu(cin, base), conv_bn_relu(base, 2 * base)
        self.mid = conv_bn_relu(2 * base, 4 * base)
        self.up2, self.dec2 = nn.ConvTranspose2d(4 * base, 2 * base, 2, stride=2), conv_bn_relu(4 * base, 2 * base)
        self.up1, self.dec1 = nn.ConvTranspose2d(2 * base, base, 2, stride=2), conv_bn_relu(2 * base, base)
        self.head = nn.Conv2d(base, classes, 1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.head(d1)


# name -> (constructor, input shape)
MODELS = {
    'mobilenet_v2_035': (lambda: torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=10), (1, 3, 96, 96)),
    'mobilenet_v3_small': (lambda: torchvision.models.mobilenet_v3_small(num_classes=10), (1, 3, 96, 96)),
    'squeezenet1_1': (lambda: torchvision.models.squeezenet1_1(num_classes=10), (1, 3, 96, 96)),
    # The Raspberry Pi Pico's model (issue #32): ImageNet's 1000 classes at 224x224, 1.24 M parameters.
    'squeezenet1_1_224': (lambda: torchvision.models.squeezenet1_1(num_classes=1000), (1, 3, 224, 224)),
    # The STM32N6's models (issue #32): ImageNet's 1000 classes, the STM32 model zoo's MobileNet v2 0.35 at
    # 128x128 and 224x224 (the same tensor shapes) and the full-width network at 224x224.
    'mobilenet_v2_035_128': (lambda: torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=1000),
                             (1, 3, 128, 128)),
    'mobilenet_v2_035_224': (lambda: torchvision.models.mobilenet_v2(width_mult=0.35, num_classes=1000),
                             (1, 3, 224, 224)),
    'mobilenet_v2_224': (lambda: torchvision.models.mobilenet_v2(num_classes=1000), (1, 3, 224, 224)),
    'shufflenet_v2_x0_5': (lambda: torchvision.models.shufflenet_v2_x0_5(num_classes=10), (1, 3, 96, 96)),
    'mnasnet0_5': (lambda: torchvision.models.mnasnet0_5(num_classes=10), (1, 3, 96, 96)),
    # 4.0 M parameters: more int8 weights than the 4 MB flash of the QEMU boards hold.
    'efficientnet_b0': (lambda: torchvision.models.efficientnet_b0(num_classes=10), (1, 3, 96, 96)),
    'dscnn_torch': (DSCNN, (1, 1, 49, 10)),
    'unet_torch': (UNet, (1, 3, 64, 64)),
}
# Board-sized models, exported only when named: the benches that take every model run each
# through QEMU and the tiling search, which at 224x224 takes minutes rather than seconds.
NAMED_ONLY = {'squeezenet1_1_224', 'mobilenet_v2_035_128', 'mobilenet_v2_035_224', 'mobilenet_v2_224'}


def build(name):
    torch.manual_seed(SEED)
    make, shape = MODELS[name]
    model = make()
    # torchvision zero-initializes many biases; trained ones differ, and equal ones would be
    # exported as one shared initializer (which ORT's quantizer scales for one reader only).
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith('bias') and not p.any():
                p.uniform_(-0.1, 0.1)
    # Batch-norm statistics from seeded random batches (cumulative average), as training would set them.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn((8,) + shape[1:]))
    return model.eval(), shape


def export(name, out_dir, act, weight_bits, n_calib):
    model, shape = build(name)
    float_path = os.path.join(out_dir, f'{name}.float.onnx')
    torch.onnx.export(model, torch.zeros(shape), float_path, opset_version=13, do_constant_folding=True,
                      input_names=['input'], output_names=['output'], training=torch.onnx.TrainingMode.EVAL)
    rng = np.random.default_rng(SEED)
    calib = rng.standard_normal((n_calib,) + shape).astype(np.float32)
    sample = rng.standard_normal(shape).astype(np.float32)
    calib_path = os.path.join(out_dir, f'{name}.calib.npy')
    np.save(calib_path, calib)
    np.save(os.path.join(out_dir, f'{name}.input_0.npy'), sample)
    qdq_path = os.path.join(out_dir, f'{name}.qdq.onnx')
    quantize_qdq.quantize(float_path, [calib_path], qdq_path, act, weight_bits, pre=True)
    info = {'name': name, 'input_shape': list(shape), 'parameters': sum(p.numel() for p in model.parameters()),
            'float_bytes': os.path.getsize(float_path), 'qdq_bytes': os.path.getsize(qdq_path),
            'activations': act, 'weight_bits': weight_bits, 'calibration_samples': n_calib,
            'torch': torch.__version__, 'torchvision': torchvision.__version__}
    with open(os.path.join(out_dir, f'{name}.json'), 'w') as f:
        json.dump(info, f, indent=1)
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('out_dir')
    defaults = [n for n in MODELS if n not in NAMED_ONLY]
    ap.add_argument('names', nargs='*', help=f'default: all of {", ".join(defaults)}')
    ap.add_argument('--activations', choices=['uint8', 'int8'], default='uint8')
    ap.add_argument('--weight-bits', type=int, choices=[8, 7], default=8)
    ap.add_argument('--calib', type=int, default=16, help='calibration samples (default 16)')
    a = ap.parse_args()
    for n in a.names:
        if n not in MODELS:
            sys.exit(f'torchvision_models: unknown model {n} (known: {", ".join(MODELS)})')
    os.makedirs(a.out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for n in a.names or defaults:
        info = export(n, a.out_dir, a.activations, a.weight_bits, a.calib)
        print(f'{n}: {info["parameters"]:,} parameters, {info["qdq_bytes"]:,} B QDQ model')


if __name__ == '__main__':
    main()
