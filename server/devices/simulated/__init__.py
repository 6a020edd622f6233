"""Each role's simulated device (``croupier device simulate``, docs/devices.md "Simulators"):
a ``SimulatedDevice`` subclass per role, named by the role's registration and made by
``SimulatedDevice(id, role, …)``."""
