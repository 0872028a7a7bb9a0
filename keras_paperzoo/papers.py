"""One record per paper: what the package, the CLI, the docs and the tests list about it. Imports no Keras.

A `Paper` names the paper's trainers (as "module:Class", with the part `paperzoo export`
deploys), its `paperzoo train` recipe, its `paperzoo reproduce` reproduction (module and
budgets), its claim and the committed results that test it, and the tiny instances the
cross-cutting tests build. Everything that used to be a hand-kept list is derived from
`PAPERS`: `recipes.RECIPES`, `reproductions.REPRODUCTIONS`, `cli.EXPORT_SUBMODELS`,
tests/trainer_zoo.py's `TRAINERS`, tests/recipes/tiny_runs.py's `FAST_ARGUMENTS`;
tests/test_papers.py checks the rest (every `Trainer` subclass has one record, the docs'
tables name every paper). Adding a paper: docs/adding-a-paper.md.
"""

import dataclasses
import importlib

BUDGETS = ("smoke", "cpu", "gpu", "paper")


@dataclasses.dataclass(frozen=True)
class Recipe:
    """`paperzoo train NAME`: its module's `run(args)` and the flags it reads beyond `recipes.COMMON_FLAGS`."""

    name: str
    description: str
    module: str
    flags: tuple = ()  # argparse names of the `paperzoo train` flags it reads beyond COMMON_FLAGS
    tiny_run: tuple = ()  # the arguments of its seconds-long test run ({images}, {text}: tiny_runs.py's files)
    paper: str = ""  # the record's citation (filled in by `recipes.RECIPES`)

    def load(self):
        return importlib.import_module(self.module)


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """`paperzoo reproduce NAME`: its module of keras_paperzoo.reproductions and the module's arguments per budget."""

    module: str
    budgets: dict
    notes: str = ""
    requires: tuple = ()  # (import name, extra): optional packages every budget needs, checked before it runs
    paper_setting: str = ""  # the data and schedule behind the paper's numbers, written beside them
    data: str = ""  # the data the module reads when no --dataset / --data / --text is given
    name: str = ""  # the record's name, citation and claim (filled in by `reproductions.REPRODUCTIONS`)
    paper: str = ""
    claim: str = ""

    def load(self):
        return importlib.import_module(f"keras_paperzoo.reproductions.{self.module}")

    def arguments(self, budget):
        if budget not in self.budgets:
            raise ValueError(f"--budget {budget!r}: one of {', '.join(BUDGETS)}")
        return list(self.budgets[budget])


@dataclasses.dataclass(frozen=True)
class Tiny:
    """A tiny instance of a trainer for the cross-cutting tests (tests/trainer_zoo.py): `trainer.from_preset(preset,
    **overrides)` fitted on 16 images of 16 x 16 (with their indices when `indexed`), or, with no preset, the
    builder of this name in tests/trainer_zoo.py."""

    name: str
    trainer: str = ""
    preset: str = ""
    overrides: dict = dataclasses.field(default_factory=dict)
    indexed: bool = False


@dataclasses.dataclass(frozen=True)
class Paper:
    name: str  # `paperzoo reproduce NAME`
    title: str  # as the docs' tables name it
    citation: str
    claim: str = ""  # what the reproduction tests
    results: tuple = ()  # the committed results files (applications/results/) the README's Papers row links
    # "module:Class" -> the attribute `paperzoo export` deploys (None: the whole model)
    trainers: dict = dataclasses.field(default_factory=dict)
    recipe: Recipe = None
    reproduction: Reproduction = None
    tiny: tuple = ()  # Tiny instances for tests/trainer_zoo.py


# --- the reproductions' shared budgets (docs/reproductions.md) ---------------------------------------------------
# The smoke budgets of the image papers share these: the embedded digits, a few dozen images.
_DIGITS = ("--dataset", "digits", "--train-images", "128", "--test-images", "60")
_SSL_SMOKE = _DIGITS + ("--backbone", "tiny", "--epochs", "1", "--batch-size", "64", "--probe-epochs", "1")
_SSL_CPU = ("--dataset", "mnist")  # ssl_cifar.py's defaults: MNIST at 16 x 16, 4,000 images, 2 epochs
_SSL_GPU = ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
            "--epochs", "100", "--batch-size", "256")
_SSL_PAPER = ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
              "--epochs", "200", "--batch-size", "512")
_SSL_PAPER_SETTING = "ImageNet (or CIFAR-10 with a ResNet-18), hundreds of epochs on GPUs"
_MNIST, _CIFAR, _DIGITS_DATA = "MNIST", "CIFAR-10", "digits"
# The optional packages a reproduction needs at every budget, (import name, the extra or the pip command that
# installs it): checked before it runs, refused in one line (keras_paperzoo.optional.require_extras).
_KERAS_HUB = ("keras_hub", 'pip install --no-deps "keras-hub>=0.32"')  # GPT, BERT, iGPT and the Transformer's layers
_TF_TEXT = (("tensorflow", "tf"), ("tensorflow_text", "tf"), ("keras_hub", "tf"))  # WordPiece, tf.data


def _ssl(runs_cpu, runs_smoke, notes=""):
    """ssl_cifar.py's reproduction of one paper (its `--runs`), on MNIST at the CPU budget."""
    runs = ("--runs", runs_cpu)
    return Reproduction("ssl_cifar", {
        "smoke": _SSL_SMOKE + ("--runs", runs_smoke), "cpu": _SSL_CPU + runs,
        "gpu": _SSL_GPU + runs, "paper": _SSL_PAPER + runs,
    }, notes or "gpu / paper: CIFAR-10 with the CIFAR ResNet-20 (the closest backbone to the published ResNet-18 "
                "runs); the paper's ImageNet schedule is out of reach offline.",
        paper_setting=_SSL_PAPER_SETTING, data=_MNIST)


# --- the recipes' shared flags and tiny runs ---------------------------------------------------------------------
_IMAGES = ("image_size",)
_SELF_SUPERVISED = ("image_size", "probe_epochs")  # recipes/self_supervised.py's pretrain
_EPOCHS_AND_STEPS = ("--epochs", "3", "--steps-per-epoch", "3")
_TINY_IMAGES = ("--dataset", "{images}", *_EPOCHS_AND_STEPS, "--batch-size", "8")


def _ssl_tiny_run(preset):
    """The SSL recipes on their *_tiny presets (two residual blocks): the machinery under test is the recipe's and
    the run's, not the network's; the default presets' ResNet-20s cost minutes of compilation per run on JAX."""
    return (*_TINY_IMAGES, "--preset", preset, "--probe-epochs", "2")


_TINY_SHAPE = {"image_shape": (16, 16, 3)}

PAPERS = (
    Paper(
        "gan", "GAN", "Goodfellow et al. 2014, Generative Adversarial Nets",
        "Fig. 1: p_g approaches p_data on a 1-D toy; Table 1: Parzen log-likelihood of MNIST test digits 225 +- 2.",
        ("gan_mnist_h100_simultaneous_metrics.json",),
        trainers={"keras_paperzoo.models.gan:GAN": "generator"},
        recipe=Recipe(
            "gan",
            "GAN on images (MLP generator, maxout discriminator, Algorithm 1); Parzen log-likelihood.",
            "keras_paperzoo.recipes.gan", ("image_size", "parzen_samples", "gan_update"),
            (*_TINY_IMAGES, "--parzen-samples", "20")),
        reproduction=Reproduction("gan", {
            "smoke": ("--dataset", "digits", "--epochs", "1", "--steps-per-epoch", "2", "--batch-size", "50",
                      "--parzen-samples", "200", "--toy-steps", "20"),
            "cpu": ("--dataset", "mnist", "--epochs", "40"),
            "gpu": ("--dataset", "mnist", "--epochs", "100"),
            "paper": ("--dataset", "mnist", "--epochs", "250"),
        }, "paper: 250 epochs, the span of the momentum schedule (0.5 -> 0.7); the paper trained 'hundreds'.",
            paper_setting="MNIST, hundreds of epochs on a GPU (Table 1)", data=_MNIST),
        tiny=(Tiny("gan"),),
    ),
    Paper(
        "alexnet", "AlexNet", "Krizhevsky et al. 2012, ImageNet Classification with Deep CNNs",
        "Sec. 3.3: local response normalization lowers the test error (CIFAR-10: 13 % without, 11 % with).",
        ("alexnet_seeds_results.md", "alexnet_fixed_scale_seeds_results.md"),
        recipe=Recipe(
            "alexnet",
            "AlexNet classifier (two towers, LRN, overlapping pooling, dropout), paper SGD recipe; digits at 67 x 67 "
            "on a CPU (the paper's: --image-size 227).",
            # The smallest images its network takes (conv1 11 x 11 / 4 and three poolings).
            "keras_paperzoo.recipes.classifier", _IMAGES, (*_TINY_IMAGES, "--image-size", "67")),
        reproduction=Reproduction("alexnet_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "40", "--epochs", "1",
                      "--batch-size", "32", "--filters", "8,16,16,16,8", "--fc-units", "32,32"),
            # A quarter of the widths leaves chance only with fan-in-scaled weights, unit-scale inputs and a warm-up
            # (alexnet_cifar.py: the paper's N(0, 0.01^2) did not, in 391 updates).
            "cpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "3",
                    "--kernel-initializer", "he_normal", "--inputs", "standardized", "--warmup-steps", "100"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "30",
                    "--filters", "96,256,384,384,256", "--fc-units", "1024,1024"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "90",
                      "--image-size", "227", "--filters", "96,256,384,384,256", "--fc-units", "4096,4096"),
        }, "The paper's CIFAR-10 figure is for a four-layer CNN, ours for AlexNet itself (CIFAR upsampled); "
           "paper: AlexNet at 227 x 227 for its 90 epochs.",
            paper_setting="CIFAR-10, a four-layer CNN (Sec. 3.3)", data=_CIFAR),
    ),
    Paper(
        "vgg", "VGG", "Simonyan & Zisserman 2015, Very Deep Convolutional Networks",
        "Table 3: LRN does not help (A-LRN 29.7 % vs A 29.6 % top-1 error) and depth does (B 28.7 %).",
        ("vgg_seeds_results.md",),
        recipe=Recipe(
            "vgg",
            "VGG classifier, configurations A-E (--preset vgg_a ... vgg_e), paper SGD recipe; digits at 32 x 32 on a "
            "CPU (the paper's: --image-size 224).",
            # The smallest images its five poolings take.
            "keras_paperzoo.recipes.classifier", _IMAGES, (*_TINY_IMAGES, "--image-size", "32")),
        reproduction=Reproduction("vgg_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "40", "--epochs", "1",
                      "--batch-size", "32", "--configurations", "A,A-LRN", "--filters", "8,8,16,16,16",
                      "--fc-units", "16,16"),
            "cpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "74",
                    "--filters", "64,128,256,512,512", "--fc-units", "512,512"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "74",
                      "--batch-size", "256", "--image-size", "224", "--filters", "64,128,256,512,512",
                      "--fc-units", "4096,4096"),
        }, "ImageNet is not offline: CIFAR-10 stands in; paper: the published widths at 224 x 224, 74 epochs.",
            paper_setting="ImageNet at 224 x 224, 74 epochs (Table 3)", data=_CIFAR),
    ),
    Paper(
        "resnet", "ResNet", "He et al. 2016, Deep Residual Learning",
        "Table 6 / Fig. 6: residual nets beat plain nets of the same depth; the deeper plain net trains worse.",
        ("resnet_seeds_results.md", "resnet20_cifar_h100_64k_metrics.json"),
        # The image classifier of every supervised vision paper (AlexNet, VGG, ViT build it on their backbones).
        trainers={"keras_paperzoo.models.image_classifier:ImageClassifier": None},
        recipe=Recipe(
            "resnet-cifar",
            "CIFAR-style ResNet or plain net (--preset resnet20_cifar ... plain110_cifar), paper recipe and "
            "augmentation.",
            "keras_paperzoo.recipes.classifier", ("image_size", "warmup_steps")),
        reproduction=Reproduction("resnet_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "64", "--test-images", "40", "--epochs", "2",
                      "--batch-size", "32", "--nets", "resnet20_cifar", "--warmup-steps", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--epochs", "30", "--steps-per-epoch", "0", "--warmup-steps", "0"),
            "paper": ("--dataset", "cifar10", "--epochs", "164", "--steps-per-epoch", "0", "--warmup-steps", "0"),
        }, "paper: 164 passes of batch 128 over the 50,000 images = 64k updates (the paper: 45k images).",
            paper_setting="CIFAR-10, 64k updates of batch 128 (Table 6)", data=_CIFAR),
        tiny=(Tiny("resnet"),),
    ),
    Paper(
        "vit", "ViT", "Dosovitskiy et al. 2021, An Image is Worth 16x16 Words",
        "App. D.3 / Fig. 9: a class token and global average pooling work alike (from scratch on CIFAR-10).",
        ("vit_cifar_results.md",),
        recipe=Recipe(
            "vit",
            "Vision Transformer classifier (--preset vit_ti16 ... vit_h14), patch size chosen for the image size.",
            "keras_paperzoo.recipes.classifier", _IMAGES),
        reproduction=Reproduction("vit_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "64", "--test-images", "40", "--epochs", "1",
                      "--batch-size", "32", "--layers", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--epochs", "50", "--layers", "6"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--epochs", "200", "--layers", "12",
                      "--dropout", "0.1"),
        }, "The paper's 98.1 % needs pre-training on ImageNet-21k / JFT (not offline); paper: ViT-Ti/4 from scratch.",
            paper_setting="CIFAR-10 after ImageNet-21k / JFT pre-training (App. D.3)", data=_CIFAR),
        tiny=(Tiny("vit"),),
    ),
    Paper(
        "transformer", "Transformer", "Vaswani et al. 2017, Attention Is All You Need",
        "A Transformer trained from scratch translates Multi30k de -> en (small ones reach BLEU in the mid-30s).",
        ("transformer_multi30k_results.md",),
        # exported whole: a SavedModel that decodes (export/translator.py)
        trainers={"keras_paperzoo.models.transformer:TransformerTranslator": None},
        recipe=Recipe(
            "transformer",
            "Encoder-decoder Transformer translation (--preset transformer_base, transformer_big, small sizes): "
            "label smoothing, Noam schedule, beam search, BLEU.",
            "keras_paperzoo.recipes.transformer", (),
            ("--dataset", "{multi30k}", "--preset", "transformer_tiny", *_EPOCHS_AND_STEPS, "--batch-size", "4")),
        reproduction=Reproduction("transformer_multi30k", {
            "smoke": ("--data", "toy", "--preset", "transformer_tiny", "--updates", "2", "--batch-size", "16",
                      "--train-pairs", "64", "--test-pairs", "3", "--beam-size", "2", "--vocabulary-size", "300",
                      "--updates-per-epoch", "1", "--warmup-steps", "1", "--buckets", "24,64"),
            "cpu": (),
            "gpu": ("--updates", "20000", "--preset", "transformer_base"),
            "paper": ("--updates", "100000", "--preset", "transformer_base", "--average-last", "5"),
        }, "WMT14 is not offline: Multi30k stands in; paper: the base model's 100k updates, last 5 averaged.",
            requires=_TF_TEXT + (("sacrebleu", "text"),),  # + BLEU
            paper_setting="WMT14 (the paper); small Transformers on Multi30k from scratch (the BLEU figure)",
            data="Multi30k de-en"),
        tiny=(Tiny("transformer"),),
    ),
    Paper(
        "bert", "BERT", "Devlin et al. 2019, BERT: Pre-training of Deep Bidirectional Transformers",
        "Pre-training (masked LM + NSP) then fine-tuning beats training on SST-2 alone (BERT-base: 93.5 %).",
        ("bert_sst2_results.md",),
        trainers={"keras_paperzoo.models.bert:BertPretrainer": "backbone",
                  "keras_paperzoo.models.bert:BertClassifier": None,
                  "keras_paperzoo.models.bert:BertTokenTagger": None,
                  "keras_paperzoo.models.bert:BertMultipleChoice": None,
                  "keras_paperzoo.models.bert:BertSpanExtractor": None},
        recipe=Recipe(
            "bert",
            "BERT pre-training (masked LM + next sentence prediction) then fine-tuning a head (--preset bert_base, "
            "bert_large, small sizes): the SST-2 classifier, or --task tagging / multiple_choice / squad on "
            "--task-data files (CoNLL, SWAG, SQuAD).",
            "keras_paperzoo.recipes.bert", ("task", "task_data"),
            ("--dataset", "{documents}", *_EPOCHS_AND_STEPS, "--batch-size", "4")),
        reproduction=Reproduction("bert_sst2", {
            "smoke": ("--data", "sample", "--layers", "1", "--hidden", "16", "--vocabulary-size", "200",
                      "--sequence-length", "16", "--batch-size", "8", "--pretrain-steps", "2",
                      "--train-sentences", "32", "--finetune-epochs", "1", "--lr", "1e-4", "--finetune-seeds", "0"),
            "cpu": (),
            "gpu": ("--pretrain-steps", "40000", "--train-sentences", "67349", "--layers", "4", "--hidden", "256"),
            "paper": ("--pretrain-steps", "1000000", "--train-sentences", "67349", "--layers", "12",
                      "--hidden", "768", "--vocabulary-size", "30000", "--sequence-length", "128",
                      "--batch-size", "256", "--pretrain-lr", "1e-4", "--pretrain-warmup", "0.01",
                      "--lr", "5e-5,3e-5,2e-5"),
        }, "paper: BERT-base's size and 1M updates, on the offline 1.3M-word corpus (not 3.3B words).",
            requires=_TF_TEXT,
            paper_setting="BooksCorpus + Wikipedia, 3.3B words, 1M updates; GLUE SST-2 test",
            data="Tiny Shakespeare, Multi30k English, SST-2"),
        tiny=(Tiny("bert"),),
    ),
    Paper(
        "gpt", "GPT-2", "Radford et al. 2018 / 2019, GPT-1 and GPT-2",
        "A decoder-only Transformer learns next-character prediction (nanoGPT's Tiny Shakespeare: 1.47 nats).",
        ("gpt_shakespeare_results.md",),
        trainers={"keras_paperzoo.models.gpt:GPTCausalLM": None},
        recipe=Recipe(
            "gpt",
            "Causal language model (--preset gpt1, gpt2_small ... gpt2_xl, small sizes), character-level by default "
            "or --bpe-vocabulary-size N, with samples; --task classification / entailment / similarity / "
            "multiple_choice fine-tunes GPT-1's heads on a --task-data JSON-lines file.",
            "keras_paperzoo.recipes.gpt", ("bpe_vocabulary_size", "task", "task_data"),
            # A 600-character text: windows (and samples) of 59 characters, not the built-in text's 128 (PyTorch's
            # cached decoding took 1 s of CPU per character under load).
            ("--dataset", "{text}", *_EPOCHS_AND_STEPS, "--batch-size", "4")),
        reproduction=Reproduction("gpt_shakespeare", {
            "smoke": ("--text", "sample", "--updates", "2", "--batch-size", "8"),
            "cpu": (),
            "gpu": ("--preset", "gpt_char_shakespeare", "--updates", "5000"),
            "paper": ("--preset", "gpt_char_shakespeare", "--updates", "5000"),
        }, "The published figure is nanoGPT's shakespeare_char run; gpu and paper are that run.",
            requires=(_KERAS_HUB,),
            paper_setting="Tiny Shakespeare, nanoGPT's 6 x 384 for 5,000 iterations on a GPU", data="Tiny Shakespeare"),
        tiny=(Tiny("gpt"),),
    ),
    Paper(
        "moco", "MoCo", "He et al. 2020 / Chen et al. 2020, Momentum Contrast (MoCo v1 / v2)",
        "MoCo v2 learns a representation (kNN above random init); with m = 0 the loss oscillates (Sec. 4.1).",
        ("moco_seeds_results.md",),
        trainers={"keras_paperzoo.models.moco:MoCo": "encoder"},
        recipe=Recipe(
            "moco",
            "MoCo pre-training (--preset moco_v2_... or moco_v1_...): momentum key encoder, queue, InfoNCE; kNN and "
            "linear probe of the frozen encoder.",
            "keras_paperzoo.recipes.moco", _SELF_SUPERVISED, _ssl_tiny_run("moco_tiny")),
        reproduction=Reproduction("moco_cifar", {
            "smoke": _DIGITS + ("--preset", "moco_tiny", "--momenta", "0", "--epochs", "1", "--batch-size", "64",
                                "--probe-epochs", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "50",
                    "--batch-size", "256", "--momenta", "0.99,0.999,0"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "200",
                      "--batch-size", "512", "--preset", "moco_cifar_resnet18", "--momenta", "0.99"),
        }, "paper: the MoCo authors' CIFAR-10 demo (ResNet-18, 200 epochs, batch 512); ImageNet is not offline.",
            paper_setting="CIFAR-10, ResNet-18, 200-800 epochs on GPUs (the authors' demo)", data=_CIFAR),
        tiny=(Tiny("moco", "MoCo", "moco_tiny", {**_TINY_SHAPE, "queue_size": 16}),),
    ),
    Paper(
        "mae", "MAE", "He et al. 2022, Masked Autoencoders Are Scalable Vision Learners",
        "Table 3: MAE pre-training then fine-tuning beats the same ViT from scratch (83.6 % vs 82.3 %).",
        ("mae_mnist_results.md", "mae_cifar10_results.md"),
        trainers={"keras_paperzoo.models.mae:MAE": "encoder"},
        recipe=Recipe(
            "mae",
            "MAE pre-training of a ViT (--preset mae_tiny ... mae_vit_h14): 75 % random masking, reconstruction "
            "pictures, kNN of the frozen encoder.",
            "keras_paperzoo.recipes.mae", _IMAGES),
        reproduction=Reproduction("mae_cifar", {
            "smoke": _DIGITS + ("--layers", "1", "--pretrain-epochs", "1", "--finetune-epochs", "1",
                                "--batch-size", "64", "--probe-epochs", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--pretrain-epochs", "100",
                    "--finetune-epochs", "20"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--pretrain-epochs",
                      "1600", "--finetune-epochs", "100", "--batch-size", "4096"),
        }, "paper: MAE's 1600 + 100 epochs at batch 4096 on CIFAR-10 with mae_tiny (ImageNet is not offline).",
            paper_setting="ImageNet-1k, ViT-B, 1600 epochs (Table 3)", data=_CIFAR),
        tiny=(Tiny("mae", "MAE", "mae_tiny", _TINY_SHAPE),),
    ),
    Paper(
        "simclr", "SimCLR", "Chen et al. 2020, A Simple Framework for Contrastive Learning (SimCLR v1 / v2)",
        "Sec. 4.2 / Fig. 8: h before the head probes better than z after it; the temperature matters.",
        ("simclr_seeds_results.md",),
        trainers={"keras_paperzoo.models.simclr:SimCLR": "encoder"},
        recipe=Recipe(
            "simclr",
            "SimCLR pre-training (--preset simclr_resnet20_cifar ... simclr_v2_resnet50): two views, projection "
            "head, NT-Xent, LARS; kNN and linear probe of the frozen encoder h.",
            "keras_paperzoo.recipes.simclr", _SELF_SUPERVISED, _ssl_tiny_run("simclr_tiny")),
        reproduction=_ssl("simclr,simclr_t0.1,simclr_t1", "simclr"),
        tiny=(Tiny("simclr", "SimCLR", "simclr_tiny"),),
    ),
    Paper(
        "byol", "BYOL", "Grill et al. 2020, Bootstrap Your Own Latent (BYOL)",
        "Table 5: BYOL learns; without the predictor, or with tau = 0, it collapses.",
        ("ssl_mnist_results.md",),
        trainers={"keras_paperzoo.models.byol:BYOL": "encoder"},
        recipe=Recipe(
            "byol",
            "BYOL pre-training (--preset byol_resnet20_cifar ... byol_resnet50): online network predicting a "
            "momentum target, no negatives; output_std, kNN and linear probe of the online encoder.",
            "keras_paperzoo.recipes.byol", _SELF_SUPERVISED, _ssl_tiny_run("byol_tiny")),
        reproduction=_ssl("byol,byol_no_predictor,byol_tau0", "byol"),
        tiny=(Tiny("byol", "BYOL", "byol_tiny"),),
    ),
    Paper(
        "swav", "SwAV",
        "Caron et al. 2020, Unsupervised Learning of Visual Features by Contrasting Cluster Assignments (SwAV)",
        "Sec. 4 / README: multi-crop gives SwAV its gain (75.3 % vs 70.1 % ImageNet linear); with near-uniform "
        "codes (eps too large) the loss stays at ln K and the features stay at random init.",
        ("ssl_mnist_results.md",),
        trainers={"keras_paperzoo.models.swav:SwAV": "encoder"},
        recipe=Recipe(
            "swav",
            "SwAV pre-training (--preset swav_resnet20_cifar, swav_cifar_resnet18, swav_resnet50, swav_tiny): "
            "multi-crop, prototypes, Sinkhorn codes of the full-size crops predicted from every other crop, LARS; "
            "loss_over_ln_k (collapse), kNN and linear probe of the frozen encoder.",
            # swav_tiny's 8 prototypes: a batch of 8 spreads them (2 x 16 + 2 x 7 crops).
            "keras_paperzoo.recipes.swav", _SELF_SUPERVISED, _ssl_tiny_run("swav_tiny")),
        reproduction=_ssl("swav,swav_2crops,swav_eps10", "swav,swav_2crops,swav_eps10",
                          "gpu: lightly's CIFAR-10 protocol is 200 epochs at batch 512 (kNN 84.2 %, ResNet-18); this "
                          "budget runs the CIFAR ResNet-20 for 100 epochs at 256. paper: ImageNet is not offline."),
        tiny=(Tiny("swav", "SwAV", "swav_tiny"),),
    ),
    Paper(
        "instdisc", "InstDisc",
        "Wu et al. 2018, Unsupervised Feature Learning via Non-Parametric Instance Discrimination (InstDisc)",
        "Sec. 3.3 / Fig. 3: the proximal term makes the training loss oscillate less.",
        ("instdisc_seeds_results.md",),
        trainers={"keras_paperzoo.models.instdisc:InstDisc": "encoder"},
        recipe=Recipe(
            "instdisc",
            "InstDisc pre-training (--preset instdisc_softmax_resnet20_cifar, the default; instdisc_resnet20_cifar "
            "... instdisc_resnet50 with the paper's NCE against 4096 noise rows): one view per image, a memory bank "
            "of every image's feature; the paper's kNN against the bank, kNN and linear probe of the frozen encoder.",
            # NCE (instdisc_tiny), whose Z must resume too; the recipe cuts the noise samples to 32 of the 64 images.
            "keras_paperzoo.recipes.instdisc", _SELF_SUPERVISED, _ssl_tiny_run("instdisc_tiny")),
        reproduction=Reproduction("instdisc_proximal", {
            "smoke": ("--runs", "proximal_30,nce_paper", "--backbone", "tiny", "--train-images", "128",
                      "--test-images", "60", "--epochs", "2", "--batch-size", "32", "--probe-epochs", "1"),
            "cpu": (),
            "gpu": ("--dataset", "mnist", "--epochs", "50", "--batch-size", "256"),
            "paper": ("--dataset", "mnist", "--epochs", "200", "--batch-size", "256"),
        }, "paper: the paper's 200 epochs on MNIST at 16 x 16 (ImageNet is not offline).",
            paper_setting="ImageNet / CIFAR-10, 200 epochs on GPUs", data=_DIGITS_DATA),
        tiny=(Tiny("instdisc", "InstDisc", "instdisc_tiny", {"num_data": 16, "num_negatives": 8}, indexed=True),),
    ),
    Paper(
        "invaspread", "InvaSpread",
        "Ye et al. 2019, Unsupervised Embedding Learning via Invariant and Spreading Instance Feature (InvaSpread)",
        "The batch-softmax embedding learns (kNN above its random init; CIFAR-10 ResNet-18: 83.6 %).",
        ("ssl_mnist_results.md",),
        trainers={"keras_paperzoo.models.invaspread:InvaSpread": "embedding_network"},
        recipe=Recipe(
            "invaspread",
            "InvaSpread pre-training (--preset invaspread_resnet20_cifar, invaspread_cifar_resnet18): one encoder, "
            "two views, softmax over the batch's instance features (tau 0.1); kNN and linear probe of the frozen "
            "encoder h.",
            "keras_paperzoo.recipes.invaspread", _SELF_SUPERVISED, _ssl_tiny_run("invaspread_tiny")),
        reproduction=_ssl("invaspread", "invaspread"),
        tiny=(Tiny("invaspread", "InvaSpread", "invaspread_tiny"),),
    ),
    Paper(
        "cpc", "CPC", "van den Oord et al. 2018 / Henaff et al. 2019, Contrastive Predictive Coding (CPC v1 / v2)",
        "Sec. 2.3: the bound log N - L on the mutual information rises; the encoder learns.",
        ("ssl_mnist_results.md",),
        trainers={"keras_paperzoo.models.cpc:CPC": "encoder"},
        recipe=Recipe(
            "cpc",
            "CPC pre-training (--preset cpc_v1_small ... cpc_v2_imagenet): a grid of patches, a masked context over "
            "the rows, InfoNCE on the rows ahead (mi_bound = log N - loss); kNN and linear probe of the pooled patch "
            "encodings.",
            "keras_paperzoo.recipes.cpc", _SELF_SUPERVISED, _ssl_tiny_run("cpc_tiny")),
        reproduction=_ssl("cpc", "cpc"),
        tiny=(Tiny("cpc", "CPC", "cpc_tiny"),),
    ),
    Paper(
        "cmc", "CMC", "Tian et al. 2019, Contrastive Multiview Coding (CMC)",
        "The L and ab encoders learn by contrasting the two views (kNN above their random init).",
        ("ssl_mnist_results.md",),
        trainers={"keras_paperzoo.models.cmc:CMC": "encoder"},
        recipe=Recipe(
            "cmc",
            "CMC pre-training on the L and ab views of colour images (--preset cmc_resnet20_cifar ... "
            "cmc_resnet50_half): one encoder and one memory bank per view, NCE; kNN and linear probe of both "
            "encoders' features.",
            # cmc_tiny's 32 negatives: half the 64 images, the most the recipe allows
            "keras_paperzoo.recipes.cmc", _SELF_SUPERVISED, _ssl_tiny_run("cmc_tiny")),
        reproduction=_ssl("cmc", "cmc"),
        tiny=(Tiny("cmc", "CMC", "cmc_tiny", {**_TINY_SHAPE, "num_data": 16, "num_negatives": 8}, indexed=True),),
    ),
    Paper(
        "deepcluster", "DeepCluster",
        "Caron et al. 2018, Deep Clustering for Unsupervised Learning of Visual Features (DeepCluster)",
        "Fig. 2a: the NMI between the k-means clusters and the (unseen) labels rises over training; the features "
        "beat their random init.",
        ("deepcluster_mnist_seeds_results.md",),
        trainers={"keras_paperzoo.models.deepcluster:DeepCluster": "encoder"},
        recipe=Recipe(
            "deepcluster",
            "DeepCluster pre-training (--preset deepcluster_resnet20_cifar, deepcluster_resnet50, deepcluster_tiny): "
            "every epoch k-means on PCA-whitened features gives pseudo-labels, a re-initialised classifier learns "
            "them from batches drawn uniformly over the clusters; NMI against the labels and the last epoch, kNN and "
            "linear probe of the frozen encoder.",
            # k-means pseudo-labels re-clustered every epoch: deepcluster_tiny's k = 10 of the 64 images.
            "keras_paperzoo.recipes.deepcluster", _SELF_SUPERVISED, _ssl_tiny_run("deepcluster_tiny")),
        reproduction=Reproduction("deepcluster_nmi", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "60", "--backbone", "tiny",
                      "--epochs", "2", "--batch-size", "32", "--clusters", "10"),
            "cpu": (),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
                    "--epochs", "100", "--batch-size", "256", "--clusters", "100"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
                      "--epochs", "500", "--batch-size", "256", "--clusters", "100"),
        }, "ImageNet is not offline: MNIST (cpu: 2,000 images, k = 50, 6 epochs, 2.4 min) and CIFAR-10 (gpu, paper: "
           "k = 10 x the classes) stand in; paper: "
           "the paper's 500 epochs, AlexNet replaced by the CIFAR ResNet-20, no Sobel filter.",
            paper_setting="ImageNet, AlexNet, 500 epochs on GPUs", data=_MNIST),
        tiny=(Tiny("deepcluster", "DeepCluster", "deepcluster_tiny",
                   {**_TINY_SHAPE, "num_data": 16, "num_clusters": 4}),),
    ),
    Paper(
        "densecl", "DenseCL",
        "Wang et al. 2021, Dense Contrastive Learning for Self-Supervised Visual Pre-training (DenseCL)",
        "Abstract / Table 1: at the same budget DenseCL beats MoCo v2 on dense prediction (+2.0 AP VOC detection, "
        "+3.0 mIoU VOC segmentation) at under 1 % extra time; here a dense linear probe of digits on a canvas.",
        ("densecl_seeds_results.md",),
        trainers={"keras_paperzoo.models.densecl:DenseCL": "encoder"},
        recipe=Recipe(
            "densecl",
            "DenseCL pre-training (--preset densecl_resnet8_cifar, densecl_tiny, densecl_resnet50): MoCo v2 plus a "
            "dense head, correspondence by backbone-feature similarity, a pixel-level InfoNCE against a second "
            "queue; kNN and linear probe of the frozen encoder.",
            "keras_paperzoo.recipes.densecl", _SELF_SUPERVISED, _ssl_tiny_run("densecl_tiny")),
        reproduction=Reproduction("densecl_canvas", {
            "smoke": ("--train-canvases", "64", "--test-canvases", "32", "--backbone", "tiny", "--epochs", "1",
                      "--batch-size", "32", "--queue-size", "64", "--probe-epochs", "2"),
            "cpu": (),
            "gpu": ("--dataset", "mnist", "--train-canvases", "20000", "--test-canvases", "2000", "--epochs", "50",
                    "--batch-size", "256", "--queue-size", "4096", "--seeds", "3"),
            "paper": ("--dataset", "mnist", "--train-canvases", "60000", "--test-canvases", "5000", "--epochs",
                      "200", "--batch-size", "256", "--queue-size", "16384", "--seeds", "3"),
        }, "VOC / COCO are out of reach offline: digits pasted on a 24 x 24 canvas, every location of the frozen map "
           "probed linearly (mIoU over 10 digits + background); paper: the paper's 200 epochs at batch 256 on MNIST "
           "canvases, ResNet-8.",
            paper_setting="ImageNet pre-training, VOC / COCO dense tasks", data="digits on a canvas"),
        tiny=(Tiny("densecl", "DenseCL", "densecl_tiny", {**_TINY_SHAPE, "queue_size": 16}),),
    ),
    Paper(
        "beit", "BEiT", "Bao et al. 2022, BEiT: BERT Pre-Training of Image Transformers",
        "Table 4: masked image modelling that predicts visual tokens fine-tunes better than predicting pixels; "
        "both beat training from scratch (BEiT-B ImageNet fine-tuned: 83.2 %).",
        ("beit_mnist_results.md",),
        trainers={"keras_paperzoo.models.beit:BEiT": "backbone",
                  "keras_paperzoo.models.beit:VisualTokenizer": "encoder",  # the tokenizer: images -> token logits
                  "keras_paperzoo.models.beit:BEiTClassifier": None},
        recipe=Recipe(
            "beit",
            "BEiT pre-training in two stages (--preset beit_tiny_digits ... beit_large_patch16_224): a discrete-VAE "
            "visual tokenizer trained here, then masked image modelling (blockwise masks, [M], the visual tokens of "
            "the masked patches predicted); tokenizer perplexity and reconstructions, kNN of the frozen backbone.",
            "keras_paperzoo.recipes.beit", _IMAGES),
        reproduction=Reproduction("beit_mnist", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "60", "--layers", "1",
                      "--tokenizer-epochs", "1", "--pretrain-epochs", "1", "--finetune-epochs", "1",
                      "--batch-size", "64", "--tokenizer-width", "16"),
            "cpu": ("--dataset", "mnist"),
            "gpu": ("--dataset", "mnist", "--train-images", "0", "--test-images", "0", "--tokenizer-width", "64",
                    "--tokenizer-epochs", "10", "--pretrain-epochs", "100", "--finetune-epochs", "30",
                    "--batch-size", "256"),
            "paper": ("--dataset", "mnist", "--train-images", "0", "--test-images", "0", "--tokenizer-width", "64",
                      "--tokenizer-epochs", "30", "--pretrain-epochs", "800", "--finetune-epochs", "100",
                      "--batch-size", "2048", "--pretrain-lr", "1.5e-3"),
        }, "ImageNet and DALL-E's tokenizer are not offline: MNIST with a dVAE trained here; paper: BEiT's 800 "
           "epochs at batch 2048 (lr 1.5e-3) and 100 of fine-tuning, on MNIST with beit_tiny_digits.",
            paper_setting="ImageNet-1k, BEiT-B, 800 epochs (Table 4)", data=_MNIST),
        tiny=(Tiny("visual_tokenizer"), Tiny("beit")),
    ),
    Paper(
        "gpt1", "GPT-1", "Radford et al. 2018, Improving Language Understanding by Generative Pre-Training (GPT-1)",
        "Table 5 / Sec. 5: fine-tuning a pre-trained GPT beats the same transformer trained on the task alone.",
        ("gpt1_sst2_results.md",),
        trainers={"keras_paperzoo.models.gpt:GPTClassifier": None},  # its recipe: `paperzoo train gpt --task ...`
        reproduction=Reproduction("gpt1_sst2", {
            "smoke": ("--data", "sample", "--layers", "1", "--hidden", "32", "--heads", "2", "--vocabulary-size",
                      "300", "--sequence-length", "32", "--batch-size", "8", "--pretrain-steps", "4",
                      "--zero-shot-points", "2", "--train-sentences", "32", "--finetune-epochs", "1", "--lr", "1e-3",
                      "--finetune-seeds", "0", "--choice-entities", "12", "--choice-train", "4",
                      "--choice-pretrain-steps", "4", "--choice-epochs", "1", "--choice-lr", "1e-3",
                      "--choice-vocabulary-size", "300"),
            "cpu": (),
            "gpu": ("--corpus", "all", "--layers", "6", "--hidden", "384", "--heads", "6", "--vocabulary-size",
                    "8000", "--sequence-length", "128", "--batch-size", "64", "--pretrain-steps", "50000",
                    "--zero-shot-points", "10", "--choice-pretrain-steps", "6000"),
            "paper": ("--corpus", "all", "--layers", "12", "--hidden", "768", "--heads", "12", "--vocabulary-size",
                      "16000", "--sequence-length", "512", "--batch-size", "64", "--pretrain-steps", "100000",
                      "--pretrain-lr", "2.5e-4", "--zero-shot-points", "10", "--lr", "6.25e-5",
                      "--train-sentences", "67349", "--choice-pretrain-steps", "20000", "--choice-lr", "6.25e-5"),
        }, "BooksCorpus is not offline: the LM text is the SST-2 training sentences (cpu) or all the offline English, "
           "1.3M words (gpu, paper); cpu: 2 x 128, 1,200 LM updates, 800 labelled sentences (a 2-core shared CPU); "
           "paper: GPT-1's 12 x 768, context 512, lr 2.5e-4 / 6.25e-5, all of SST-2; a 16,000-token BPE (40,000 "
           "merges need more text).",
            requires=(_KERAS_HUB, ("tokenizers", "text")),  # + the byte-pair vocabulary
            paper_setting="BooksCorpus pre-training, GPT-1 12 x 768; SST-2 test (Tables 4, 5)", data="SST-2"),
    ),
    Paper(
        "gpt3", "GPT-3", "Brown et al. 2020, Language Models are Few-Shot Learners (GPT-3)",
        "Fig. 1.2: in-context learning: accuracy rises with the number of shots K in the prompt, on questions "
        "whose answer is not in the prompt, while a random-initialised model and a unigram baseline stay flat.",
        ("gpt3_icl_results.md",),
        reproduction=Reproduction("gpt3_icl", {
            "smoke": ("--seeds", "1", "--updates", "8", "--width", "16", "--heads", "2", "--tasks", "1", "--queries",
                      "4", "--chunks", "1", "--scoring", "rows"),
            "cpu": (),
            "gpu": ("--updates", "20000", "--width", "128", "--batch-size", "64", "--tasks", "250"),
            "paper": ("--updates", "100000", "--layers", "4", "--width", "256", "--heads", "8", "--batch-size", "128",
                      "--tasks", "500", "--queries", "8"),
        }, "Synthetic rule episodes (Caesar shifts of letters, offsets of digits; the question's input never among "
           "the shots) stand in for the paper's benchmarks; cpu: 2 x 64 GPT, 3 seeds (JAX); gpu / paper: "
           "written-down schedules, not run.",
            requires=(_KERAS_HUB,),
            paper_setting="GPT-3's models up to 175B parameters on natural-language tasks (Fig. 1.2)",
            data="synthetic letter and digit tasks"),
    ),
    Paper(
        "igpt", "iGPT", "Chen et al. 2020, Generative Pretraining from Pixels (iGPT)",
        "Fig. 3: the linear probe on averaged layer-normed features peaks in the middle of the network, not at "
        "the last layer, for the autoregressive and BERT objectives (iGPT-L CIFAR-10 linear probe: 96.3 %).",
        ("igpt_mnist_results.md",),
        trainers={"keras_paperzoo.models.igpt:IGPT": "backbone"},
        recipe=Recipe(
            "igpt",
            "iGPT pre-training (--preset igpt_mnist_tiny ... igpt_xl; --objective autoregressive or bert): a k-means "
            "colour palette, a GPT-2 decoder over the pixels in raster order; linear probes of every layer, "
            "completions of the bottom half.",
            # 8 x 8 pixels: sequences of 64 palette ids, not 256 (the next-pixel loop is the same at any length).
            "keras_paperzoo.recipes.igpt", ("image_size", "objective"), (*_TINY_IMAGES, "--image-size", "8")),
        reproduction=Reproduction("igpt_mnist", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "60", "--layers", "2",
                      "--epochs", "1", "--batch-size", "64", "--samples", "1"),
            "cpu": ("--dataset", "mnist"),
            "gpu": ("--dataset", "mnist", "--train-images", "20000", "--test-images", "0", "--image-size", "28",
                    "--layers", "8", "--width", "256", "--epochs", "20", "--batch-size", "128"),
            "paper": ("--dataset", "mnist", "--train-images", "0", "--test-images", "0", "--image-size", "28",
                      "--layers", "24", "--width", "512", "--epochs", "100", "--batch-size", "128"),
        }, "CIFAR-10 at 32 x 32 over 512 colours needs a GPU for weeks: MNIST over 16 grey levels; cpu: 14 x 14 "
           "(196 tokens); paper: iGPT-S's 24 x 512 at 28 x 28 for about 47k updates of batch 128.",
            requires=(_KERAS_HUB,),
            paper_setting="ImageNet pre-training, iGPT-L; CIFAR-10 linear probe (Fig. 3)", data=_MNIST),
        tiny=(Tiny("igpt"),),
    ),
)
BY_NAME = {paper.name: paper for paper in PAPERS}


def class_name(path):
    """"keras_paperzoo.models.densecl:DenseCL" -> "DenseCL"."""
    return path.rsplit(":", 1)[1]


def load_class(path):
    """The class a "module:Class" path names (imports its module, and so Keras)."""
    module, name = path.rsplit(":", 1)
    return getattr(importlib.import_module(module), name)


def trainer_class(name):
    """The recorded trainer class called `name` ("DenseCL"), imported; None when no record names it."""
    paths = [path for paper in PAPERS for path in paper.trainers if class_name(path) == name]
    return load_class(paths[0]) if paths else None
