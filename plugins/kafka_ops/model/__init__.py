"""The typed, pure models every layer above shares: a cluster's metadata at a moment (`cluster`) and its
consumer groups (`groups`). No sockets, no lake: the sources fill them, the snapshot writes them."""
