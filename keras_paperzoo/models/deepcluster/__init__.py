"""DeepCluster (Caron et al. 2018): k-means pseudo-labels of the network's own features, re-clustered every epoch.

    from keras_paperzoo.models.deepcluster import DeepCluster
    model = DeepCluster.from_preset("deepcluster_resnet20_cifar", num_data=len(images))
"""

from keras_paperzoo.models.deepcluster.deepcluster import DeepCluster
from keras_paperzoo.models.deepcluster.deepcluster_callback import Reclustering
from keras_paperzoo.models.deepcluster.deepcluster_presets import DEEPCLUSTER_PRESETS
from keras_paperzoo.models.deepcluster.deepcluster_sampler import ClusterBalancedBatches, uniform_cluster_sample
