"""Recipes: what `paperzoo train NAME` runs. Listing them imports no Keras.

Each recipe declares the `paperzoo train` flags it reads beyond `COMMON_FLAGS` (its
`flags`, argparse names); `paperzoo train` refuses any other flag in one line before
Keras is imported (tests/test_cli.py checks each declared flag is read by the recipe).
"""

import dataclasses
import importlib


@dataclasses.dataclass(frozen=True)
class Recipe:
    name: str
    paper: str
    description: str
    module: str
    flags: tuple = ()  # the flags it reads beyond COMMON_FLAGS

    def load(self):
        return importlib.import_module(self.module)


# The flags every recipe reads (`common.start_run` takes --output-dir, --resume, --seed, --data-parallel).
COMMON_FLAGS = ("dataset", "epochs", "steps_per_epoch", "batch_size", "preset", "output_dir", "backend", "seed",
                "resume", "data_parallel", "verbose")
_IMAGES = ("image_size",)
_SELF_SUPERVISED = ("image_size", "probe_epochs")  # recipes/self_supervised.py's pretrain

RECIPES = {
    "gan": Recipe(
        "gan",
        "Goodfellow et al. 2014, Generative Adversarial Nets",
        "GAN on images (MLP generator, maxout discriminator, Algorithm 1); Parzen log-likelihood.",
        "keras_paperzoo.recipes.gan",
        ("image_size", "parzen_samples", "gan_update"),
    ),
    "mae": Recipe(
        "mae",
        "He et al. 2022, Masked Autoencoders Are Scalable Vision Learners",
        "MAE pre-training of a ViT (--preset mae_tiny ... mae_vit_h14): 75 % random masking, reconstruction pictures, kNN of the frozen encoder.",
        "keras_paperzoo.recipes.mae",
        _IMAGES,
    ),
    "beit": Recipe(
        "beit",
        "Bao et al. 2022, BERT Pre-Training of Image Transformers (BEiT)",
        "BEiT pre-training in two stages (--preset beit_tiny_digits ... beit_large_patch16_224): a discrete-VAE visual tokenizer trained here, then masked image modelling (blockwise masks, [M], the visual tokens of the masked patches predicted); tokenizer perplexity and reconstructions, kNN of the frozen backbone.",
        "keras_paperzoo.recipes.beit",
        _IMAGES,
    ),
    "igpt": Recipe(
        "igpt",
        "Chen et al. 2020, Generative Pretraining from Pixels (iGPT)",
        "iGPT pre-training (--preset igpt_mnist_tiny ... igpt_xl; --objective autoregressive or bert): a k-means colour palette, a GPT-2 decoder over the pixels in raster order; linear probes of every layer, completions of the bottom half.",
        "keras_paperzoo.recipes.igpt",
        ("image_size", "objective"),
    ),
    "moco": Recipe(
        "moco",
        "He et al. 2020 / Chen et al. 2020, Momentum Contrast (MoCo v1 / v2)",
        "MoCo pre-training (--preset moco_v2_... or moco_v1_...): momentum key encoder, queue, InfoNCE; kNN and linear probe of the frozen encoder.",
        "keras_paperzoo.recipes.moco",
        _SELF_SUPERVISED,
    ),
    "densecl": Recipe(
        "densecl",
        "Wang et al. 2021, Dense Contrastive Learning for Self-Supervised Visual Pre-training (DenseCL)",
        "DenseCL pre-training (--preset densecl_resnet8_cifar, densecl_tiny, densecl_resnet50): MoCo v2 plus a dense head, correspondence by backbone-feature similarity, a pixel-level InfoNCE against a second queue; kNN and linear probe of the frozen encoder.",
        "keras_paperzoo.recipes.densecl",
        _SELF_SUPERVISED,
    ),
    "simclr": Recipe(
        "simclr",
        "Chen et al. 2020, A Simple Framework for Contrastive Learning (SimCLR v1 / v2)",
        "SimCLR pre-training (--preset simclr_resnet20_cifar ... simclr_v2_resnet50): two views, projection head, NT-Xent, LARS; kNN and linear probe of the frozen encoder h.",
        "keras_paperzoo.recipes.simclr",
        _SELF_SUPERVISED,
    ),
    "swav": Recipe(
        "swav",
        "Caron et al. 2020, Unsupervised Learning of Visual Features by Contrasting Cluster Assignments (SwAV)",
        "SwAV pre-training (--preset swav_resnet20_cifar, swav_cifar_resnet18, swav_resnet50, swav_tiny): multi-crop, prototypes, Sinkhorn codes of the full-size crops predicted from every other crop, LARS; loss_over_ln_k (collapse), kNN and linear probe of the frozen encoder.",
        "keras_paperzoo.recipes.swav",
        _SELF_SUPERVISED,
    ),
    "byol": Recipe(
        "byol",
        "Grill et al. 2020, Bootstrap Your Own Latent (BYOL)",
        "BYOL pre-training (--preset byol_resnet20_cifar ... byol_resnet50): online network predicting a momentum target, no negatives; output_std, kNN and linear probe of the online encoder.",
        "keras_paperzoo.recipes.byol",
        _SELF_SUPERVISED,
    ),
    "invaspread": Recipe(
        "invaspread",
        "Ye et al. 2019, Unsupervised Embedding Learning via Invariant and Spreading Instance Feature (InvaSpread)",
        "InvaSpread pre-training (--preset invaspread_resnet20_cifar, invaspread_cifar_resnet18): one encoder, two views, softmax over the batch's instance features (tau 0.1); kNN and linear probe of the frozen encoder h.",
        "keras_paperzoo.recipes.invaspread",
        _SELF_SUPERVISED,
    ),
    "cmc": Recipe(
        "cmc",
        "Tian et al. 2019, Contrastive Multiview Coding (CMC)",
        "CMC pre-training on the L and ab views of colour images (--preset cmc_resnet20_cifar ... cmc_resnet50_half): one encoder and one memory bank per view, NCE; kNN and linear probe of both encoders' features.",
        "keras_paperzoo.recipes.cmc",
        _SELF_SUPERVISED,
    ),
    "instdisc": Recipe(
        "instdisc",
        "Wu et al. 2018, Unsupervised Feature Learning via Non-Parametric Instance Discrimination (InstDisc)",
        "InstDisc pre-training (--preset instdisc_softmax_resnet20_cifar, the default; instdisc_resnet20_cifar ... instdisc_resnet50 with the paper's NCE against 4096 noise rows): one view per image, a memory bank of every image's feature; the paper's kNN against the bank, kNN and linear probe of the frozen encoder.",
        "keras_paperzoo.recipes.instdisc",
        _SELF_SUPERVISED,
    ),
    "deepcluster": Recipe(
        "deepcluster",
        "Caron et al. 2018, Deep Clustering for Unsupervised Learning of Visual Features (DeepCluster)",
        "DeepCluster pre-training (--preset deepcluster_resnet20_cifar, deepcluster_resnet50, deepcluster_tiny): every epoch k-means on PCA-whitened features gives pseudo-labels, a re-initialised classifier learns them from batches drawn uniformly over the clusters; NMI against the labels and the last epoch, kNN and linear probe of the frozen encoder.",
        "keras_paperzoo.recipes.deepcluster",
        _SELF_SUPERVISED,
    ),
    "cpc": Recipe(
        "cpc",
        "van den Oord et al. 2018 / Henaff et al. 2019, Contrastive Predictive Coding (CPC v1 / v2)",
        "CPC pre-training (--preset cpc_v1_small ... cpc_v2_imagenet): a grid of patches, a masked context over the rows, InfoNCE on the rows ahead (mi_bound = log N - loss); kNN and linear probe of the pooled patch encodings.",
        "keras_paperzoo.recipes.cpc",
        _SELF_SUPERVISED,
    ),
    "resnet-cifar": Recipe(
        "resnet-cifar",
        "He et al. 2016, Deep Residual Learning",
        "CIFAR-style ResNet or plain net (--preset resnet20_cifar ... plain110_cifar), paper recipe and augmentation.",
        "keras_paperzoo.recipes.classifier",
        ("image_size", "warmup_steps"),
    ),
    "vit": Recipe(
        "vit",
        "Dosovitskiy et al. 2021, An Image is Worth 16x16 Words",
        "Vision Transformer classifier (--preset vit_ti16 ... vit_h14), patch size chosen for the image size.",
        "keras_paperzoo.recipes.classifier",
        _IMAGES,
    ),
    "alexnet": Recipe(
        "alexnet",
        "Krizhevsky et al. 2012, ImageNet Classification with Deep CNNs",
        "AlexNet classifier (two towers, LRN, overlapping pooling, dropout), paper SGD recipe; digits at 67 x 67 on a CPU (the paper's: --image-size 227).",
        "keras_paperzoo.recipes.classifier",
        _IMAGES,
    ),
    "vgg": Recipe(
        "vgg",
        "Simonyan & Zisserman 2015, Very Deep Convolutional Networks",
        "VGG classifier, configurations A-E (--preset vgg_a ... vgg_e), paper SGD recipe; digits at 32 x 32 on a CPU (the paper's: --image-size 224).",
        "keras_paperzoo.recipes.classifier",
        _IMAGES,
    ),
    "transformer": Recipe(
        "transformer",
        "Vaswani et al. 2017, Attention Is All You Need",
        "Encoder-decoder Transformer translation (--preset transformer_base, transformer_big, small sizes): label smoothing, Noam schedule, beam search, BLEU.",
        "keras_paperzoo.recipes.transformer",
    ),
    "bert": Recipe(
        "bert",
        "Devlin et al. 2019, BERT: Pre-training of Deep Bidirectional Transformers",
        "BERT pre-training (masked LM + next sentence prediction) then fine-tuning a head (--preset bert_base, bert_large, small sizes): the SST-2 classifier, or --task tagging / multiple_choice / squad on --task-data files (CoNLL, SWAG, SQuAD).",
        "keras_paperzoo.recipes.bert",
        ("task", "task_data"),
    ),
    "gpt": Recipe(
        "gpt",
        "Radford et al. 2018 / 2019, GPT-1 and GPT-2",
        "Causal language model (--preset gpt1, gpt2_small ... gpt2_xl, small sizes), character-level by default or --bpe-vocabulary-size N, with samples; --task classification / entailment / similarity / multiple_choice fine-tunes GPT-1's heads on a --task-data JSON-lines file.",
        "keras_paperzoo.recipes.gpt",
        ("bpe_vocabulary_size", "task", "task_data"),
    ),
}
