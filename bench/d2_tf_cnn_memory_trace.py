# The script that made the d2_tf_cnn fixture (copied from the project's shared fixture scripts, so
# that bench/make_trace.sh needs nothing outside this repository).
#
# D2: larger TensorFlow (CPU) memory-timeline trace: a small CNN (Conv2D/BatchNorm/
# MaxPool/Dense) trained for STEPS steps with a tf.function train step, plus a
# second tf.function compiled with XLA (jit_compile=True) run a few times, to see
# whether TF traces carry XLA HLO protos too. Profiled with
# tf.profiler.experimental.start/stop. CPU allocator stats are turned on with
# TF_CPU_ALLOCATOR_USE_BFC=true (BFCAllocator emits MemoryAllocation/MemoryDeallocation).
# Usage: python d2_tf_cnn_memory_trace.py LOGDIR [STEPS]
import os, sys
os.environ["TF_CPU_ALLOCATOR_USE_BFC"] = "true"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
logdir = sys.argv[1]
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 60
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([
    tf.keras.Input((32, 32, 3)),
    tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
    tf.keras.layers.BatchNormalization(),
    tf.keras.layers.MaxPooling2D(),
    tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
    tf.keras.layers.MaxPooling2D(),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dense(10)])
opt = tf.keras.optimizers.SGD(0.01, momentum=0.9)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
x = tf.random.normal((512, 32, 32, 3)); y = tf.random.uniform((512,), 0, 10, dtype=tf.int32)
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(512).batch(64).repeat().prefetch(2)

@tf.function
def train_step(xb, yb):
  with tf.GradientTape() as tape:
    loss = loss_fn(yb, model(xb, training=True))
  grads = tape.gradient(loss, model.trainable_variables)
  opt.apply_gradients(zip(grads, model.trainable_variables))
  return loss

@tf.function(jit_compile=True)
def xla_eval(xb, yb):
  return loss_fn(yb, model(xb, training=False))

opts = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=0, device_tracer_level=1)
tf.profiler.experimental.start(logdir, options=opts)
it = iter(ds)
for step in range(STEPS):
  with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
    xb, yb = next(it)
    loss = train_step(xb, yb)
for i in range(3):
  ev = xla_eval(xb, yb)
print("loss", float(loss), "xla eval", float(ev))
tf.profiler.experimental.stop()
print("cpu memory info:", tf.config.experimental.get_memory_info("CPU:0"))
