"""DCGAN and DDPM training loops: noise sampling, AMP, gradient accumulation, EMA, timing."""

import argparse
import copy
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import save_image


class Generator(nn.Module):
    def __init__(self, nz=100, ngf=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, 3, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
        )

    def forward(self, x):
        return self.net(x).view(-1)


class Diffusion(nn.Module):
    """DDPM noise schedule and training loss around a noise-prediction network."""

    def __init__(self, model, timesteps=1000):
        super().__init__()
        self.model = model
        self.timesteps = timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.register_buffer("sqrt_ab", alphas_cumprod.sqrt())
        self.register_buffer("sqrt_one_minus_ab", (1.0 - alphas_cumprod).sqrt())

    def forward(self, x0):
        b = x0.shape[0]
        t = torch.randint(0, self.timesteps, (b,), device=x0.device)
        noise = torch.randn_like(x0)
        xt = self.sqrt_ab[t].view(-1, 1, 1, 1) * x0 + self.sqrt_one_minus_ab[t].view(-1, 1, 1, 1) * noise
        return F.mse_loss(self.model(xt, t), noise)

    @torch.no_grad()
    def sample(self, shape, device):
        x = torch.randn(shape, device=device)
        for i in reversed(range(self.timesteps)):
            t = torch.full((shape[0],), i, device=device, dtype=torch.long)
            eps = self.model(x, t)
            x = (x - (1 - self.sqrt_ab[i] ** 2) / self.sqrt_one_minus_ab[i] * eps) / self.sqrt_ab[i]
            if i > 0:
                x = x + torch.randn_like(x) * 0.01
        return x


class DiffusionSlowNoise(Diffusion):
    def forward(self, x0):
        b = x0.shape[0]
        t = torch.randint(0, self.timesteps, (b,)).to(x0.device)  # expect: TL101
        noise = torch.randn(x0.shape).to(x0.device)  # expect: TL101
        xt = self.sqrt_ab[t].view(-1, 1, 1, 1) * x0 + self.sqrt_one_minus_ab[t].view(-1, 1, 1, 1) * noise
        return F.mse_loss(self.model(xt, t), noise)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)[0]
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


@torch.no_grad()
def update_ema(ema, model, decay=0.999):
    for p_ema, p in zip(ema.parameters(), model.parameters()):
        p_ema.mul_(decay).add_(p, alpha=1 - decay)


def benchmark_generator(netG, nz, device, iters=50):
    z = torch.randn(64, nz, 1, 1, device=device)
    for _ in range(5):
        netG(z)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        netG(z)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters


def time_generator_wrong(netG, z, iters=50):
    start = time.perf_counter()
    for _ in range(iters):
        netG(z)
    return (time.perf_counter() - start) / iters  # known miss (TL601): `z` is not known to be a tensor


def train_gan(args, device):
    dataset = datasets.CIFAR10(args.data, download=True, transform=transforms.Compose([
        transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]))
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True,
                        persistent_workers=True, drop_last=True)
    netG, netD = Generator(args.nz).to(device), Discriminator().to(device)
    ema = copy.deepcopy(netG).eval()
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.BCEWithLogitsLoss()
    fixed_noise = torch.randn(64, args.nz, 1, 1, device=device)

    start_time = time.time()
    for epoch in range(args.epochs):
        epoch_start = time.time()
        for i, (real, _) in enumerate(loader):  # expect: TL802
            real = real.to(device)  # expect: TL503
            b = real.size(0)
            real_label = torch.full((b,), 1.0, device=device)
            fake_label = torch.zeros(b).to(device)  # expect: TL101

            optD.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                z = torch.randn(b, args.nz, 1, 1, device=device)
                fake = netG(z)
                loss_d = criterion(netD(real), real_label) + criterion(netD(fake.detach()), fake_label)
            scaler.scale(loss_d).backward()
            scaler.step(optD)

            optG.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                loss_g = criterion(netD(fake), real_label)
            scaler.scale(loss_g).backward()
            scaler.step(optG)
            scaler.update()
            update_ema(ema, netG)

            if i % 100 == 0:
                elapsed = time.time() - start_time
                d_x = netD(real).sigmoid().mean().item()
                print(f"[{epoch}/{args.epochs}][{i}/{len(loader)}] loss_D {loss_d.item():.4f} "
                      f"loss_G {loss_g.item():.4f} D(x) {d_x:.3f} [{elapsed / 60:.1f} min]")
        print(f"epoch {epoch} took {time.time() - epoch_start:.1f}s")
        with torch.no_grad():
            save_image(ema(fixed_noise).float().cpu(), f"samples_{epoch:03d}.png", normalize=True)


def train_diffusion(args, device, net):
    dataset = datasets.CIFAR10(args.data, download=True, transform=transforms.ToTensor())
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True,
                        persistent_workers=True)
    diffusion = Diffusion(net).to(device)
    optimizer = torch.optim.AdamW(diffusion.parameters(), lr=2e-4)
    scaler = torch.amp.GradScaler("cuda")
    accum_steps = args.accum_steps
    running = 0.0
    start_time = time.time()
    for epoch in range(args.epochs):
        for step, (x, _) in enumerate(loader):
            x = x.to(device, non_blocking=True) * 2 - 1
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = diffusion(x) / accum_steps
            scaler.scale(loss).backward()
            running += loss.item()
            if (step + 1) % accum_steps == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(diffusion.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
            if step % 500 == 0:
                hours = (time.time() - start_time) / 3600
                print(f"epoch {epoch} step {step} loss {running / (step + 1):.4f} ({hours:.2f} h)")
        torch.save(diffusion.state_dict(), f"ddpm_{epoch}.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="./data")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--nz", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--accum-steps", type=int, default=4)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_gan(args, device)
