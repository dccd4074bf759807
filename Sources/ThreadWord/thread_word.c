#include "thread_word.h"

_Thread_local void *tether_thread_word TETHER_THREAD_WORD_ATTRIBUTES = 0;
_Thread_local void *tether_handles_word TETHER_THREAD_WORD_ATTRIBUTES = 0;
