"""Load-test scenarios, one Locust file each (loadtests/README.md)."""
