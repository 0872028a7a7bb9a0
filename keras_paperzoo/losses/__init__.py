"""Objectives as plain functions on keras.ops."""

from keras_paperzoo.losses.gan import (
    discriminator_loss,
    minimax_generator_loss,
    non_saturating_generator_loss,
)
from keras_paperzoo.losses.masked_reconstruction import masked_patch_mse, normalized_patch_targets
from keras_paperzoo.losses.contrastive import contrastive_accuracy, contrastive_logits, info_nce, info_nce_from_logits
from keras_paperzoo.losses.label_smoothing import label_smoothed_cross_entropy
from keras_paperzoo.losses.nt_xent import nt_xent, nt_xent_accuracy, nt_xent_logits
from keras_paperzoo.losses.byol import byol_loss, symmetric_byol_loss
from keras_paperzoo.losses.invaspread import invaspread_loss
from keras_paperzoo.losses.nce import nce_loss
from keras_paperzoo.losses.sinkhorn import sinkhorn
from keras_paperzoo.losses.swav import swav_loss
