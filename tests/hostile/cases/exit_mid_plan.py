"""Hostile: every call raises SystemExit(0), KeyboardInterrupt or GeneratorExit in turn, hoping to
end the runner cleanly mid-plan.

expect: graded
passes: none
"""
calls = 0


def softmax(x, axis=-1):
    global calls
    calls += 1
    raise (SystemExit(0), KeyboardInterrupt(), GeneratorExit())[calls % 3]
