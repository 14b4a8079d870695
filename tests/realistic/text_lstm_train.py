"""Text classification with a packed LSTM, a padding collate function and a curriculum
dataset whose maximum length grows every epoch."""

import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.data import DataLoader, Dataset


class CurriculumTextDataset(Dataset):
    def __init__(self, examples, start_len=32):
        self.examples = examples  # list of (token ids, label)
        self.max_len = start_len

    def set_epoch(self, epoch):
        self.max_len = min(512, 32 * 2 ** epoch)

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, index):
        ids, label = self.examples[index]
        return torch.tensor(ids[: self.max_len], dtype=torch.long), label


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)
    for i, seq in enumerate(seqs):
        padded[i, : len(seq)] = seq
    return padded, lengths, torch.tensor(labels)


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size, num_classes, dim=256, pad_id=0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=pad_id)
        self.lstm = nn.LSTM(dim, dim, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)
        self.fc = nn.Linear(2 * dim, num_classes)

    def forward(self, tokens, lengths):
        emb = self.embed(tokens)
        packed = pack_padded_sequence(emb, lengths=lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        mask = (torch.arange(out.shape[1], device=out.device)[None, :] < lengths[:, None].to(out.device))
        pooled = (out * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return self.fc(pooled)


class LSTMClassifierSlowMask(LSTMClassifier):
    def forward(self, tokens, lengths):
        emb = self.embed(tokens)
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = pad_packed_sequence(self.lstm(packed)[0], batch_first=True)
        mask = torch.arange(out.shape[1])[None, :] < lengths[:, None]  # expect: TL102
        return self.fc(out.masked_fill(~mask[..., None], 0.0).amax(1))


class CharRNN(nn.Module):
    """A hand-written recurrence: every step needs the previous state."""

    def __init__(self, vocab_size, dim=128):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, tokens):
        emb = self.embed(tokens)
        h = emb.new_zeros(emb.shape[0], self.cell.hidden_size)
        outputs = []
        for x_t in emb.unbind(1):
            h = self.cell(x_t, h)
            outputs.append(h)
        return self.out(torch.stack(outputs, dim=1))


def predict(model, tokenizer, texts, device):
    model.eval()
    with torch.no_grad():
        ids = [tokenizer.encode(t) for t in texts]
        lengths = torch.tensor([len(i) for i in ids])
        tokens = torch.tensor([i + [0] * (int(lengths.max()) - len(i)) for i in ids]).to(device)
        return model(tokens, lengths).argmax(-1).tolist()


def main(train_examples, vocab_size, num_classes, epochs=6):
    device = torch.device("cuda")
    dataset = CurriculumTextDataset(train_examples)
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True, collate_fn=collate)
    model = LSTMClassifier(vocab_size, num_classes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        dataset.set_epoch(epoch)
        model.train()
        total, seen = 0.0, 0
        for tokens, lengths, labels in loader:  # expect: TL803
            tokens = tokens.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            logits = model(tokens, lengths)
            loss = F.cross_entropy(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            total += loss.item() * labels.size(0)
            seen += labels.size(0)
        print(f"epoch {epoch}: max_len {dataset.max_len} loss {total / seen:.4f}")
        random.shuffle(train_examples)


def finetune(model, dataset, device, epochs=3):
    """Transformer fine-tuning loop over dict batches."""
    loader = DataLoader(dataset, batch_size=16, shuffle=True, num_workers=2, persistent_workers=True)  # expect: TL503
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for epoch in range(epochs):
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            outputs.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
