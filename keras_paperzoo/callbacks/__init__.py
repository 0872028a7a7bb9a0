"""Callbacks: monitors, pictures, checkpoints and TensorBoard logs."""

from keras_paperzoo.callbacks.epoch_seeds import EpochSeeds, seed_generator_states
from keras_paperzoo.callbacks.gan_pictures import SampleGrid, latent_interpolation
from keras_paperzoo.callbacks.image_grid import image_grid, save_png
from keras_paperzoo.callbacks.knn_monitor import KNNMonitor
from keras_paperzoo.callbacks.mae_reconstruction import MAEReconstruction, reconstruction_grid
from keras_paperzoo.callbacks.non_finite import StopOnNonFinite
from keras_paperzoo.callbacks.run_checkpoint import RunCheckpoint
from keras_paperzoo.callbacks.tensorboard import EventFileWriter, TensorBoardLogs, read_logs
