import sys

from keras_paperzoo.cli import main

sys.exit(main())
