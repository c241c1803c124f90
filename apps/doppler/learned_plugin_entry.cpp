// The learned-methods plug-in's entry point (learned_commands.hpp), compiled into
// libdoppler_learn.so only.
#include "learned_commands.hpp"

#include "doppler/train/learned_placers.hpp"

const doppler::cli::learned::Plugin* doppler_learn_plugin() {
  namespace learned = doppler::cli::learned;
  static const learned::Plugin plugin{
      DOPPLER_VERSION,    sizeof(learned::Plugin), &doppler::register_learned_placers,
      &learned::add_demo, &learned::add_train,     &learned::add_pretrain};
  return &plugin;
}
