"""An operator's seamless wallet (docs/wallet.md): the contract without I/O (``contract``)
and its HTTP client (``client``)."""
