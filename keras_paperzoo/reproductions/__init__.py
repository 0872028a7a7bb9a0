"""Reproductions: what `paperzoo reproduce PAPER --budget B` runs. Listing them imports no Keras.

Each paper maps to one module of this package (its data, model, schedule, evaluation and
report, with the paper's number beside ours) and to four budgets, each the module's
arguments for that budget:

- `smoke`: seconds on the embedded digits or built-in text, for tests (no download);
- `cpu`: the budget that was run on a 2-core CPU (the results in applications/results/);
- `gpu`: a schedule for one accelerator, between the CPU budget and the paper's;
- `paper`: the paper's own schedule, scaled only where its data (ImageNet, WMT, JFT)
  is not offline; `notes` says what.

Arguments given after the budget (`paperzoo reproduce resnet --budget cpu --nets
resnet20_cifar`) are passed to the module and override the budget's.
"""

import dataclasses
import importlib

BUDGETS = ("smoke", "cpu", "gpu", "paper")

# The smoke budgets of the image papers share these: the embedded digits, a few dozen images.
_DIGITS = ("--dataset", "digits", "--train-images", "128", "--test-images", "60")
_SSL_SMOKE = _DIGITS + ("--backbone", "tiny", "--epochs", "1", "--batch-size", "64", "--probe-epochs", "1")
_SSL_CPU = ("--dataset", "mnist")  # ssl_cifar.py's defaults: MNIST at 16 x 16, 4,000 images, 2 epochs
_SSL_GPU = ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
            "--epochs", "100", "--batch-size", "256")
_SSL_PAPER = ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
              "--epochs", "200", "--batch-size", "512")


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """One paper's reproduction: its module and the module's arguments per budget."""

    name: str
    paper: str
    claim: str
    module: str
    budgets: dict
    notes: str = ""
    requires: tuple = ()  # (import name, extra): optional packages every budget needs, checked before it runs
    paper_setting: str = ""  # the data and schedule behind the paper's numbers (SETTINGS below)
    data: str = ""  # the data the module reads when no --dataset / --data / --text is given

    def load(self):
        return importlib.import_module(f"keras_paperzoo.reproductions.{self.module}")

    def arguments(self, budget):
        if budget not in self.budgets:
            raise ValueError(f"--budget {budget!r}: one of {', '.join(BUDGETS)}")
        return list(self.budgets[budget])


def _ssl(name, paper, claim, runs_cpu, runs_smoke, notes=""):
    runs = ("--runs", runs_cpu)
    return Reproduction(name, paper, claim, "ssl_cifar", {
        "smoke": _SSL_SMOKE + ("--runs", runs_smoke), "cpu": _SSL_CPU + runs,
        "gpu": _SSL_GPU + runs, "paper": _SSL_PAPER + runs,
    }, notes or "gpu / paper: CIFAR-10 with the CIFAR ResNet-20 (the closest backbone to the published ResNet-18 "
                "runs); the paper's ImageNet schedule is out of reach offline.")


REPRODUCTIONS = {
    "gan": Reproduction(
        "gan", "Goodfellow et al. 2014, Generative Adversarial Nets",
        "Fig. 1: p_g approaches p_data on a 1-D toy; Table 1: Parzen log-likelihood of MNIST test digits 225 +- 2.",
        "gan", {
            "smoke": ("--dataset", "digits", "--epochs", "1", "--steps-per-epoch", "2", "--batch-size", "50",
                      "--parzen-samples", "200", "--toy-steps", "20"),
            "cpu": ("--dataset", "mnist", "--epochs", "40"),
            "gpu": ("--dataset", "mnist", "--epochs", "100"),
            "paper": ("--dataset", "mnist", "--epochs", "250"),
        }, "paper: 250 epochs, the span of the momentum schedule (0.5 -> 0.7); the paper trained 'hundreds'."),
    "alexnet": Reproduction(
        "alexnet", "Krizhevsky et al. 2012, ImageNet Classification with Deep CNNs",
        "Sec. 3.3: local response normalization lowers the test error (CIFAR-10: 13 % without, 11 % with).",
        "alexnet_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "40", "--epochs", "1",
                      "--batch-size", "32",
                                    "--filters", "8,16,16,16,8", "--fc-units", "32,32"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "30",
                    "--filters", "96,256,384,384,256", "--fc-units", "1024,1024"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "90",
                      "--image-size", "227", "--filters", "96,256,384,384,256", "--fc-units", "4096,4096"),
        }, "The paper's CIFAR-10 figure is for a four-layer CNN, ours for AlexNet itself (CIFAR upsampled); "
           "paper: AlexNet at 227 x 227 for its 90 epochs."),
    "vgg": Reproduction(
        "vgg", "Simonyan & Zisserman 2015, Very Deep Convolutional Networks",
        "Table 3: LRN does not help (A-LRN 29.7 % vs A 29.6 % top-1 error) and depth does (B 28.7 %).",
        "vgg_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "40", "--epochs", "1",
                      "--batch-size", "32",
                                    "--configurations", "A,A-LRN", "--filters", "8,8,16,16,16",
                                    "--fc-units", "16,16"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "74",
                    "--filters", "64,128,256,512,512", "--fc-units", "512,512"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "74",
                      "--batch-size", "256", "--image-size", "224", "--filters", "64,128,256,512,512",
                      "--fc-units", "4096,4096"),
        }, "ImageNet is not offline: CIFAR-10 stands in; paper: the published widths at 224 x 224, 74 epochs."),
    "resnet": Reproduction(
        "resnet", "He et al. 2016, Deep Residual Learning",
        "Table 6 / Fig. 6: residual nets beat plain nets of the same depth; the deeper plain net trains worse.",
        "resnet_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "64", "--test-images", "40", "--epochs", "2",
                                    "--batch-size", "32", "--nets", "resnet20_cifar", "--warmup-steps", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--epochs", "30", "--steps-per-epoch", "0", "--warmup-steps", "0"),
            "paper": ("--dataset", "cifar10", "--epochs", "164", "--steps-per-epoch", "0", "--warmup-steps", "0"),
        }, "paper: 164 passes of batch 128 over the 50,000 images = 64k updates (the paper: 45k images)."),
    "vit": Reproduction(
        "vit", "Dosovitskiy et al. 2021, An Image is Worth 16x16 Words",
        "App. D.3 / Fig. 9: a class token and global average pooling work alike (from scratch on CIFAR-10).",
        "vit_cifar", {
            "smoke": ("--dataset", "digits", "--train-images", "64", "--test-images", "40", "--epochs", "1",
                                    "--batch-size", "32", "--layers", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--epochs", "50", "--layers", "6"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--epochs", "200", "--layers", "12",
                      "--dropout", "0.1"),
        }, "The paper's 98.1 % needs pre-training on ImageNet-21k / JFT (not offline); paper: ViT-Ti/4 from scratch."),
    "transformer": Reproduction(
        "transformer", "Vaswani et al. 2017, Attention Is All You Need",
        "A Transformer trained from scratch translates Multi30k de -> en (small ones reach BLEU in the mid-30s).",
        "transformer_multi30k", {
            "smoke": ("--data", "toy", "--preset", "transformer_tiny", "--updates", "2", "--batch-size", "16",
                      "--train-pairs", "64", "--test-pairs", "3", "--beam-size", "2", "--vocabulary-size", "300",
                      "--updates-per-epoch", "1", "--warmup-steps", "1", "--buckets", "24,64"),
            "cpu": (),
            "gpu": ("--updates", "20000", "--preset", "transformer_base"),
            "paper": ("--updates", "100000", "--preset", "transformer_base", "--average-last", "5"),
        }, "WMT14 is not offline: Multi30k stands in; paper: the base model's 100k updates, last 5 averaged."),
    "bert": Reproduction(
        "bert", "Devlin et al. 2019, BERT: Pre-training of Deep Bidirectional Transformers",
        "Pre-training (masked LM + NSP) then fine-tuning beats training on SST-2 alone (BERT-base: 93.5 %).",
        "bert_sst2", {
            "smoke": ("--data", "sample", "--layers", "1", "--hidden", "16", "--vocabulary-size", "200",
                      "--sequence-length", "16", "--batch-size", "8", "--pretrain-steps", "2",
                      "--train-sentences", "32", "--finetune-epochs", "1", "--lr", "1e-4", "--finetune-seeds", "0"),
            "cpu": (),
            "gpu": ("--pretrain-steps", "40000", "--train-sentences", "67349", "--layers", "4", "--hidden", "256"),
            "paper": ("--pretrain-steps", "1000000", "--train-sentences", "67349", "--layers", "12",
                      "--hidden", "768", "--vocabulary-size", "30000", "--sequence-length", "128",
                      "--batch-size", "256", "--pretrain-lr", "1e-4", "--pretrain-warmup", "0.01",
                      "--lr", "5e-5,3e-5,2e-5"),
        }, "paper: BERT-base's size and 1M updates, on the offline 1.3M-word corpus (not 3.3B words)."),
    "gpt": Reproduction(
        "gpt", "Radford et al. 2018 / 2019, GPT-1 and GPT-2",
        "A decoder-only Transformer learns next-character prediction (nanoGPT's Tiny Shakespeare: 1.47 nats).",
        "gpt_shakespeare", {
            "smoke": ("--text", "sample", "--updates", "2", "--batch-size", "8"),
            "cpu": (),
            "gpu": ("--preset", "gpt_char_shakespeare", "--updates", "5000"),
            "paper": ("--preset", "gpt_char_shakespeare", "--updates", "5000"),
        }, "The published figure is nanoGPT's shakespeare_char run; gpu and paper are that run."),
    "moco": Reproduction(
        "moco", "He et al. 2020 / Chen et al. 2020, Momentum Contrast (MoCo v1 / v2)",
        "MoCo v2 learns a representation (kNN above random init); with m = 0 the loss oscillates (Sec. 4.1).",
        "moco_cifar", {
            "smoke": _DIGITS + ("--preset", "moco_tiny", "--momenta", "0", "--epochs", "1", "--batch-size", "64",
                                "--probe-epochs", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "50",
                    "--batch-size", "256", "--momenta", "0.99,0.999,0"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--epochs", "200",
                      "--batch-size", "512", "--preset", "moco_cifar_resnet18", "--momenta", "0.99"),
        }, "paper: the MoCo authors' CIFAR-10 demo (ResNet-18, 200 epochs, batch 512); ImageNet is not offline."),
    "mae": Reproduction(
        "mae", "He et al. 2022, Masked Autoencoders Are Scalable Vision Learners",
        "Table 3: MAE pre-training then fine-tuning beats the same ViT from scratch (83.6 % vs 82.3 %).",
        "mae_cifar", {
            "smoke": _DIGITS + ("--layers", "1", "--pretrain-epochs", "1", "--finetune-epochs", "1",
                                "--batch-size", "64", "--probe-epochs", "1"),
            "cpu": ("--dataset", "cifar10"),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--pretrain-epochs", "100",
                    "--finetune-epochs", "20"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--pretrain-epochs",
                      "1600", "--finetune-epochs", "100", "--batch-size", "4096"),
        }, "paper: MAE's 1600 + 100 epochs at batch 4096 on CIFAR-10 with mae_tiny (ImageNet is not offline)."),
    "simclr": _ssl("simclr", "Chen et al. 2020, A Simple Framework for Contrastive Learning (SimCLR)",
                   "Sec. 4.2 / Fig. 8: h before the head probes better than z after it; the temperature matters.",
                   "simclr,simclr_t0.1,simclr_t1", "simclr"),
    "byol": _ssl("byol", "Grill et al. 2020, Bootstrap Your Own Latent (BYOL)",
                 "Table 5: BYOL learns; without the predictor, or with tau = 0, it collapses.",
                 "byol,byol_no_predictor,byol_tau0", "byol"),
    "swav": _ssl("swav", "Caron et al. 2020, Contrasting Cluster Assignments (SwAV)",
                 "Sec. 4 / README: multi-crop gives SwAV its gain (75.3 % vs 70.1 % ImageNet linear); with "
                 "near-uniform codes (eps too large) the loss stays at ln K and the features stay at random init.",
                 "swav,swav_2crops,swav_eps10", "swav,swav_2crops,swav_eps10",
                 "gpu: lightly's CIFAR-10 protocol is 200 epochs at batch 512 (kNN 84.2 %, ResNet-18); this budget "
                 "runs the CIFAR ResNet-20 for 100 epochs at 256. paper: ImageNet is not offline."),
    "instdisc": Reproduction(
        "instdisc", "Wu et al. 2018, Unsupervised Feature Learning via Non-Parametric Instance Discrimination",
        "Sec. 3.3 / Fig. 3: the proximal term makes the training loss oscillate less.",
        "instdisc_proximal", {
            "smoke": ("--runs", "proximal_30,nce_paper", "--backbone", "tiny", "--train-images", "128",
                      "--test-images", "60", "--epochs", "2", "--batch-size", "32", "--probe-epochs", "1"),
            "cpu": (),
            "gpu": ("--dataset", "mnist", "--epochs", "50", "--batch-size", "256"),
            "paper": ("--dataset", "mnist", "--epochs", "200", "--batch-size", "256"),
        }, "paper: the paper's 200 epochs on MNIST at 16 x 16 (ImageNet is not offline)."),
    "invaspread": _ssl("invaspread", "Ye et al. 2019, Invariant and Spreading Instance Feature (InvaSpread)",
                       "The batch-softmax embedding learns (kNN above its random init; CIFAR-10 ResNet-18: 83.6 %).",
                       "invaspread", "invaspread"),
    "cpc": _ssl("cpc", "van den Oord et al. 2018 / Henaff et al. 2019, Contrastive Predictive Coding (CPC)",
                "Sec. 2.3: the bound log N - L on the mutual information rises; the encoder learns.", "cpc", "cpc"),
    "cmc": _ssl("cmc", "Tian et al. 2019, Contrastive Multiview Coding (CMC)",
                "The L and ab encoders learn by contrasting the two views (kNN above their random init).", "cmc", "cmc"),
    "deepcluster": Reproduction(
        "deepcluster", "Caron et al. 2018, Deep Clustering for Unsupervised Learning of Visual Features (DeepCluster)",
        "Fig. 2a: the NMI between the k-means clusters and the (unseen) labels rises over training; the features "
        "beat their random init.",
        "deepcluster_nmi", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "60", "--backbone", "tiny",
                      "--epochs", "2", "--batch-size", "32", "--clusters", "10"),
            "cpu": (),
            "gpu": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
                    "--epochs", "100", "--batch-size", "256", "--clusters", "100"),
            "paper": ("--dataset", "cifar10", "--train-images", "0", "--test-images", "0", "--backbone", "resnet20",
                      "--epochs", "500", "--batch-size", "256", "--clusters", "100"),
        }, "ImageNet is not offline: MNIST (cpu: 2,000 images, k = 50, 6 epochs, 2.4 min) and CIFAR-10 (gpu, paper: "
           "k = 10 x the classes) stand in; paper: "
           "the paper's 500 epochs, AlexNet replaced by the CIFAR ResNet-20, no Sobel filter."),
    "densecl": Reproduction(
        "densecl", "Wang et al. 2021, Dense Contrastive Learning for Self-Supervised Visual Pre-training (DenseCL)",
        "Abstract / Table 1: at the same budget DenseCL beats MoCo v2 on dense prediction (+2.0 AP VOC detection, "
        "+3.0 mIoU VOC segmentation) at under 1 % extra time; here a dense linear probe of digits on a canvas.",
        "densecl_canvas", {
            "smoke": ("--train-canvases", "64", "--test-canvases", "32", "--backbone", "tiny", "--epochs", "1",
                      "--batch-size", "32", "--queue-size", "64", "--probe-epochs", "2"),
            "cpu": (),
            "gpu": ("--dataset", "mnist", "--train-canvases", "20000", "--test-canvases", "2000", "--epochs", "50",
                    "--batch-size", "256", "--queue-size", "4096", "--seeds", "3"),
            "paper": ("--dataset", "mnist", "--train-canvases", "60000", "--test-canvases", "5000", "--epochs",
                      "200", "--batch-size", "256", "--queue-size", "16384", "--seeds", "3"),
        }, "VOC / COCO are out of reach offline: digits pasted on a 24 x 24 canvas, every location of the frozen map "
           "probed linearly (mIoU over 10 digits + background); paper: the paper's 200 epochs at batch 256 on MNIST "
           "canvases, ResNet-8."),
    "beit": Reproduction(
        "beit", "Bao et al. 2022, BEiT: BERT Pre-Training of Image Transformers",
        "Table 4: masked image modelling that predicts visual tokens fine-tunes better than predicting pixels; "
        "both beat training from scratch (BEiT-B ImageNet fine-tuned: 83.2 %).",
        "beit_mnist", {
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
           "epochs at batch 2048 (lr 1.5e-3) and 100 of fine-tuning, on MNIST with beit_tiny_digits."),
    "gpt1": Reproduction(
        "gpt1", "Radford et al. 2018, Improving Language Understanding by Generative Pre-Training (GPT-1)",
        "Table 5 / Sec. 5: fine-tuning a pre-trained GPT beats the same transformer trained on the task alone.",
        "gpt1_sst2", {
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
           "merges need more text)."),
    "gpt3": Reproduction(
        "gpt3", "Brown et al. 2020, Language Models are Few-Shot Learners (GPT-3)",
        "Fig. 1.2: in-context learning: accuracy rises with the number of shots K in the prompt, on questions "
        "whose answer is not in the prompt, while a random-initialised model and a unigram baseline stay flat.",
        "gpt3_icl", {
            "smoke": ("--seeds", "1", "--updates", "8", "--width", "16", "--heads", "2", "--tasks", "1", "--queries",
                      "4", "--chunks", "1", "--scoring", "rows"),
            "cpu": (),
            "gpu": ("--updates", "20000", "--width", "128", "--batch-size", "64", "--tasks", "250"),
            "paper": ("--updates", "100000", "--layers", "4", "--width", "256", "--heads", "8", "--batch-size", "128",
                      "--tasks", "500", "--queries", "8"),
        }, "Synthetic rule episodes (Caesar shifts of letters, offsets of digits; the question's input never among "
           "the shots) stand in for the paper's benchmarks; cpu: 2 x 64 GPT, 3 seeds (JAX); gpu / paper: "
           "written-down schedules, not run."),
    "igpt": Reproduction(
        "igpt", "Chen et al. 2020, Generative Pretraining from Pixels (iGPT)",
        "Fig. 3: the linear probe on averaged layer-normed features peaks in the middle of the network, not at "
        "the last layer, for the autoregressive and BERT objectives (iGPT-L CIFAR-10 linear probe: 96.3 %).",
        "igpt_mnist", {
            "smoke": ("--dataset", "digits", "--train-images", "128", "--test-images", "60", "--layers", "2",
                      "--epochs", "1", "--batch-size", "64", "--samples", "1"),
            "cpu": ("--dataset", "mnist"),
            "gpu": ("--dataset", "mnist", "--train-images", "20000", "--test-images", "0", "--image-size", "28",
                    "--layers", "8", "--width", "256", "--epochs", "20", "--batch-size", "128"),
            "paper": ("--dataset", "mnist", "--train-images", "0", "--test-images", "0", "--image-size", "28",
                      "--layers", "24", "--width", "512", "--epochs", "100", "--batch-size", "128"),
        }, "CIFAR-10 at 32 x 32 over 512 colours needs a GPU for weeks: MNIST over 16 grey levels; cpu: 14 x 14 "
           "(196 tokens); paper: iGPT-S's 24 x 512 at 28 x 28 for about 47k updates of batch 128."),
}

# Written beside every paper number (reproduce_PAPER.md / .json, the metrics files): the paper's data and schedule,
# and the data the module reads by default (our side is labelled with that data, or the one passed, and the budget).
_MNIST, _CIFAR, _DIGITS_DATA = "MNIST", "CIFAR-10", "digits"
_SSL_PAPER_SETTING = "ImageNet (or CIFAR-10 with a ResNet-18), hundreds of epochs on GPUs"
SETTINGS = {
    "gan": ("MNIST, hundreds of epochs on a GPU (Table 1)", _MNIST),
    "alexnet": ("CIFAR-10, a four-layer CNN (Sec. 3.3)", _CIFAR),
    "vgg": ("ImageNet at 224 x 224, 74 epochs (Table 3)", _CIFAR),
    "resnet": ("CIFAR-10, 64k updates of batch 128 (Table 6)", _CIFAR),
    "vit": ("CIFAR-10 after ImageNet-21k / JFT pre-training (App. D.3)", _CIFAR),
    "transformer": ("WMT14 (the paper); small Transformers on Multi30k from scratch (the BLEU figure)",
                    "Multi30k de-en"),
    "bert": ("BooksCorpus + Wikipedia, 3.3B words, 1M updates; GLUE SST-2 test", "Tiny Shakespeare, Multi30k English, SST-2"),
    "gpt": ("Tiny Shakespeare, nanoGPT's 6 x 384 for 5,000 iterations on a GPU", "Tiny Shakespeare"),
    "moco": ("CIFAR-10, ResNet-18, 200-800 epochs on GPUs (the authors' demo)", _CIFAR),
    "mae": ("ImageNet-1k, ViT-B, 1600 epochs (Table 3)", _CIFAR),
    "simclr": (_SSL_PAPER_SETTING, _MNIST), "byol": (_SSL_PAPER_SETTING, _MNIST),
    "swav": (_SSL_PAPER_SETTING, _MNIST), "invaspread": (_SSL_PAPER_SETTING, _MNIST),
    "cpc": (_SSL_PAPER_SETTING, _MNIST), "cmc": (_SSL_PAPER_SETTING, _MNIST),
    "instdisc": ("ImageNet / CIFAR-10, 200 epochs on GPUs", _DIGITS_DATA),
    "deepcluster": ("ImageNet, AlexNet, 500 epochs on GPUs", _MNIST),
    "densecl": ("ImageNet pre-training, VOC / COCO dense tasks", "digits on a canvas"),
    "beit": ("ImageNet-1k, BEiT-B, 800 epochs (Table 4)", _MNIST),
    "gpt1": ("BooksCorpus pre-training, GPT-1 12 x 768; SST-2 test (Tables 4, 5)", "SST-2"),
    "gpt3": ("GPT-3's models up to 175B parameters on natural-language tasks (Fig. 1.2)", "synthetic letter and digit tasks"),
    "igpt": ("ImageNet pre-training, iGPT-L; CIFAR-10 linear probe (Fig. 3)", _MNIST),
}
# The optional packages a reproduction needs at every budget, (import name, the extra or the pip command that
# installs it): checked before it runs, refused in one line (keras_paperzoo.optional.require_extras).
_KERAS_HUB = ("keras_hub", 'pip install --no-deps "keras-hub>=0.32"')  # GPT, BERT, iGPT and the Transformer's layers
_TF_TEXT = (("tensorflow", "tf"), ("tensorflow_text", "tf"), ("keras_hub", "tf"))  # WordPiece, tf.data
REQUIRES = {
    "transformer": _TF_TEXT + (("sacrebleu", "text"),),  # + BLEU
    "bert": _TF_TEXT,
    "gpt": (_KERAS_HUB,), "gpt3": (_KERAS_HUB,), "igpt": (_KERAS_HUB,),
    "gpt1": (_KERAS_HUB, ("tokenizers", "text")),  # + the byte-pair vocabulary
}
REPRODUCTIONS = {name: dataclasses.replace(reproduction, paper_setting=SETTINGS[name][0], data=SETTINGS[name][1],
                                           requires=REQUIRES.get(name, ()))
                 for name, reproduction in REPRODUCTIONS.items()}
