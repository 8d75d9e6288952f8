"""What runs inside the sandbox and its wire: plan, runner, channel, instruments."""
