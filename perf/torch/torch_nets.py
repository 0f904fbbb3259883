"""starcnn's built-in networks (model/nn/networks/*.net) as PyTorch modules, with the same layer
names, so a starcnn checkpoint's tensors are these modules' state_dict."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    """lenet.net (PyTorch's CIFAR-10 tutorial net) on `channels`-channel 32x32 inputs."""

    def __init__(self, channels=3):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class Wide(nn.Module):
    """wide.net: six 3x3 pad-1 convs (64,64,128,128,256,256), pool after pairs, fc 4096->10."""

    def __init__(self, channels=3):
        super().__init__()
        widths = [channels, 64, 64, 128, 128, 256, 256]
        for i in range(6):
            setattr(self, f"conv{i + 1}", nn.Conv2d(widths[i], widths[i + 1], 3, padding=1))
        self.fc1 = nn.Linear(4096, 10)

    def forward(self, x):
        for i in range(6):
            x = F.relu(getattr(self, f"conv{i + 1}")(x))
            if i % 2 == 1:
                x = F.max_pool2d(x, 2)
        return self.fc1(torch.flatten(x, 1))


NETWORKS = {"lenet": LeNet, "wide": Wide}
