"""A LightningModule with a label-smoothing loss module and a DataModule."""

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, random_split
from torchvision import datasets, transforms


class LabelSmoothingCrossEntropy(nn.Module):
    def __init__(self, smoothing=0.1, ignore_index=-100):
        super().__init__()
        self.smoothing = smoothing
        self.ignore_index = ignore_index

    def forward(self, logits, target):
        num_classes = logits.size(-1)
        log_probs = F.log_softmax(logits, dim=-1)
        valid = target != self.ignore_index
        safe_target = target.masked_fill(~valid, 0)
        nll = -log_probs.gather(-1, safe_target.unsqueeze(-1)).squeeze(-1)
        smooth = -log_probs.mean(dim=-1)
        loss = (1.0 - self.smoothing) * nll + self.smoothing * smooth
        if self.smoothing > 0 and num_classes > 1:
            loss = loss * valid
        return loss.sum() / valid.sum().clamp(min=1)


class ConvNet(nn.Module):
    def __init__(self, num_classes=10, width=64):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(2 * width, num_classes)
        self.dropout = nn.Dropout(0.2)

    def forward(self, x, return_features=False):
        feats = self.features(x).flatten(1)
        logits = self.head(self.dropout(feats))
        if return_features:
            return logits, feats
        return logits


class LitClassifier(L.LightningModule):
    def __init__(self, num_classes=10, lr=1e-3, weight_decay=0.05, smoothing=0.1):
        super().__init__()
        self.save_hyperparameters()
        self.model = ConvNet(num_classes)
        self.criterion = LabelSmoothingCrossEntropy(smoothing)
        self.val_preds = []
        self.val_targets = []

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = self.criterion(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log("train/loss", loss, prog_bar=True)
        self.log("train/acc", acc, on_step=False, on_epoch=True)
        if batch_idx % 200 == 0:
            self.print(f"step {self.global_step}: loss {loss.item():.4f}")
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        preds = logits.argmax(dim=1)
        self.log("val/loss", loss.item(), prog_bar=True)
        self.log("val/acc", (preds == y).float().mean(), sync_dist=True)
        self.val_preds.append(preds.cpu())
        self.val_targets.append(y.cpu())
        correct = sum(1 for p, t in zip(preds, y) if p == t)  # expect: TL201 TL202
        self.log("val/correct", float(correct), reduce_fx="sum")

    def on_validation_epoch_end(self):
        preds = torch.cat(self.val_preds).numpy()
        targets = torch.cat(self.val_targets).numpy()
        per_class = [(preds[targets == c] == c).mean() for c in range(self.hparams.num_classes)]
        for c, acc in enumerate(per_class):
            self.log(f"val/acc_class_{c}", float(acc))
        self.val_preds.clear()
        self.val_targets.clear()

    def test_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("test/acc", (logits.argmax(1) == y).float().mean())

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        x, _ = batch
        return self(x).softmax(dim=-1)

    def configure_optimizers(self):
        decay, no_decay = [], []
        for name, param in self.named_parameters():
            if not param.requires_grad:
                continue
            (no_decay if param.ndim <= 1 or name.endswith(".bias") else decay).append(param)
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": self.hparams.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=self.hparams.lr,
        )
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=self.hparams.lr, total_steps=self.trainer.estimated_stepping_batches
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


class MNISTDataModule(L.LightningDataModule):
    def __init__(self, data_dir="./data", batch_size=128, num_workers=4):
        super().__init__()
        self.data_dir = data_dir
        self.batch_size = batch_size
        self.num_workers = num_workers
        self.transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])

    def prepare_data(self):
        datasets.MNIST(self.data_dir, train=True, download=True)
        datasets.MNIST(self.data_dir, train=False, download=True)

    def setup(self, stage=None):
        if stage in ("fit", None):
            full = datasets.MNIST(self.data_dir, train=True, transform=self.transform)
            self.train_ds, self.val_ds = random_split(full, [55000, 5000], generator=torch.Generator().manual_seed(42))
        if stage in ("test", None):
            self.test_ds = datasets.MNIST(self.data_dir, train=False, transform=self.transform)

    def train_dataloader(self):
        return DataLoader(
            self.train_ds, batch_size=self.batch_size, shuffle=True, num_workers=self.num_workers,
            pin_memory=True, persistent_workers=self.num_workers > 0,
        )

    def val_dataloader(self):
        return DataLoader(self.val_ds, batch_size=2 * self.batch_size, num_workers=self.num_workers)  # expect: TL502 TL503

    def test_dataloader(self):
        return DataLoader(self.test_ds, batch_size=2 * self.batch_size, num_workers=self.num_workers)  # expect: TL503


if __name__ == "__main__":
    L.seed_everything(42)
    trainer = L.Trainer(max_epochs=10, accelerator="auto", precision="16-mixed")
    trainer.fit(LitClassifier(), datamodule=MNISTDataModule())
